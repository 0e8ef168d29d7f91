package render

import "time"

// Millis writes a duration given in milliseconds (as the JSON documents carry them) the
// one way kstranded writes durations for people: Go's form, to a tenth of a second under
// a minute and to the second above ("12.8s", "20m0s", "1h36m48s"), so a time in a
// run's prose reads like the settings beside it (max.poll.interval 15m0s), never
// "1200.0s". docs/glossary.md.
func Millis(ms float64) string {
	d := time.Duration(ms * float64(time.Millisecond))
	if d >= time.Minute || d <= -time.Minute {
		return d.Round(time.Second).String()
	}
	return d.Round(100 * time.Millisecond).String()
}
