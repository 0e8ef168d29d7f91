package rewind

import "testing"

func TestRefusalNamesEveryRefusedMoveAndNothingElse(t *testing.T) {
	cases := []struct {
		name  string
		moves []Move
		want  string
	}{
		{"a plan without moves is not refused", nil, ""},
		{"a plan whose moves all apply is not refused", []Move{{Topic: "t", Partition: 0, Direction: Back}}, ""},
		{"one refused move is named with its partition", []Move{
			{Topic: "t", Partition: 0, Direction: Back},
			{Topic: "t", Partition: 1, Refused: "target 9 is beyond the high watermark 3"},
		}, "t/1: target 9 is beyond the high watermark 3"},
		{"several refused moves are joined in plan order", []Move{
			{Topic: "t", Partition: 0, Refused: "a"},
			{Topic: "u", Partition: 2, Refused: "b"},
		}, "t/0: a; u/2: b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := (&Plan{Moves: c.moves}).Refusal(); got != c.want {
				t.Fatalf("Refusal() = %q, want %q", got, c.want)
			}
		})
	}
}
