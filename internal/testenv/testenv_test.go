package testenv

import "testing"

func TestLiveFollowsTheVariable(t *testing.T) {
	for _, v := range []string{"", "0", "yes"} {
		t.Setenv(LiveVar, v)
		if Live() {
			t.Errorf("%s=%q selects the live tier; only 1 does", LiveVar, v)
		}
	}
	t.Setenv(LiveVar, "1")
	if Live() == testing.Short() {
		t.Errorf("%s=1: Live() = %v in -short=%v; want live exactly when not -short", LiveVar, Live(), testing.Short())
	}
}

func TestMustLiveSkipsOutsideTheLiveTier(t *testing.T) {
	t.Setenv(LiveVar, "")
	ran := false
	t.Run("guarded", func(t *testing.T) {
		MustLive(t)
		ran = true
	})
	if ran {
		t.Errorf("MustLive did not skip with %s unset", LiveVar)
	}
}
