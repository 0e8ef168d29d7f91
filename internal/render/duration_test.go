package render

import "testing"

func TestMillisWritesDurationsAsTheSettingsAre(t *testing.T) {
	for ms, want := range map[float64]string{0: "0s", 12_840: "12.8s", 1_200_000: "20m0s", 1_200_450: "20m0s", 5_808_000: "1h36m48s", 950: "1s", 40: "0s", 140: "100ms"} {
		if got := Millis(ms); got != want {
			t.Errorf("Millis(%v) = %q, want %q", ms, got, want)
		}
	}
}
