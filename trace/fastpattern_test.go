package trace

import (
	"reflect"
	"regexp"
	"testing"
)

var fastPatternCases = []string{
	`^delivered topic=(?P<topic>\S+) partition=(?P<partition>\d+) offset=(?P<offset>\d+)$`,
	`"topic":"(?P<topic>[^"]+)","partition":(?P<partition>\d+),"offset":"(?P<offset>\d+)","msg":"delivered"`,
	`partition=(?P<partition>\d+) offset=(?P<offset>\d+)`,
	`^(?P<time>\S+) handler delivered topic=(?P<topic>\S+) partition=(?P<partition>\d+) offset=(?P<offset>\d+)`,
	`é=(?P<partition>[^=]+)`,
	`é=(?P<partition>[^é]+)`,
	`x(?P<partition>[a-z]+)y`,
	`x(?P<partition>[a-c]+)y`,
	`(?i)delivered p=(?P<partition>\d+)`,
	`p=(?P<partition>\d+)(?P<offset>\d+)`,
	`(?P<partition>\d+) (?P<offset>\d+)`,
}

// The fast matcher is an optimisation only: on every line it gives regexp's answer, or
// it declines the pattern.
func TestTheFastPatternMatcherAgreesWithRegexpOrDeclines(t *testing.T) {
	lines := []string{
		"delivered topic=stranded partition=0 offset=81",
		"delivered topic=stranded partition=0 offset=81 ",
		"xx delivered topic=stranded partition=0 offset=81",
		"delivered topic= partition=0 offset=81",
		"delivered topic=a\xffb partition=12 offset=3",
		`{"level":30,"topic":"stranded","partition":3,"offset":"82","msg":"delivered"}`,
		`"topic":"","partition":3 "topic":"s","partition":3,"offset":"82","msg":"delivered"`,
		"partition=1 partition=2 offset=3",
		"é=abc é=",
		"xaby xay xy",
		"DELIVERED P=3",
		"",
	}
	declined := 0
	for _, expr := range fastPatternCases {
		re := regexp.MustCompile(expr)
		fp := compilePattern(expr, re.NumSubexp())
		if fp == nil {
			declined++
			continue
		}
		for _, l := range lines {
			want := re.FindSubmatchIndex([]byte(l))
			got := fp.match([]byte(l), nil)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s on %q: fast %v, regexp %v", expr, l, got, want)
			}
		}
	}
	// [^é] (part of the non-ASCII runes), [a-z]+y (the run could take the y), (?i), two
	// runs one after the other, and an unanchored pattern starting with a run
	if declined != 5 {
		t.Errorf("declined %d patterns, want 5", declined)
	}
}

func FuzzFastPattern(f *testing.F) {
	f.Add(0, []byte("delivered topic=stranded partition=0 offset=81"))
	f.Add(1, []byte(`{"topic":"stranded","partition":3,"offset":"82","msg":"delivered"}`))
	f.Add(4, []byte("é=\xffa"))
	f.Fuzz(func(t *testing.T, i int, line []byte) {
		expr := fastPatternCases[uint(i)%uint(len(fastPatternCases))]
		re := regexp.MustCompile(expr)
		fp := compilePattern(expr, re.NumSubexp())
		if fp == nil {
			return
		}
		want := re.FindSubmatchIndex(line)
		if got := fp.match(line, nil); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s on %q: fast %v, regexp %v", expr, line, got, want)
		}
	})
}
