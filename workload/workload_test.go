package workload

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseSpread(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Part
		err      string
	}{
		{"a uniform spread starts at partition 0", "3x10", []Part{{0, 10}, {1, 10}, {2, 10}}, ""},
		{"an explicit spread is sorted by partition", "3:50, 0:200", []Part{{0, 200}, {3, 50}}, ""},
		{"one partition", "5:1", []Part{{5, 1}}, ""},
		{"empty is rejected", " ", nil, "empty spread"},
		{"zero records are rejected", "3x0", nil, "want an integer > 0"},
		{"zero partitions are rejected", "0x5", nil, "want an integer > 0"},
		{"a negative partition is rejected", "-1:5", nil, "partition must be"},
		{"a partition given twice is rejected", "1:5,1:6", nil, "given twice"},
		{"a missing count is rejected", "1:", nil, "want an integer > 0"},
		{"a bare number is rejected", "12", nil, "want PARTITION:RECORDS"},
		{"mixed notations are rejected", "2x3,1:4", nil, "want PARTITION:RECORDS"},
		{"too many records are rejected", "1000x100000", nil, "at most"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSpread(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseSpread(%q) = %v, %v; want error containing %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ParseSpread(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestResolveNamesBothContradictoryFlags(t *testing.T) {
	for _, tc := range []struct {
		name  string
		f     Flags
		flags []string
	}{
		{"spread and records", Flags{Spread: "2x5", SpreadSet: true, Records: 9, RecordsSet: true}, []string{"--spread", "--records"}},
		{"spread and partition", Flags{Spread: "2x5", SpreadSet: true, Partition: 1, PartitionSet: true}, []string{"--spread", "--partition"}},
		{"more transactions than records", Flags{Records: 3, Transactions: 4, TransactionsSet: true}, []string{"--transactions"}},
		{"negative transactions", Flags{Records: 3, Transactions: -1, TransactionsSet: true}, []string{"--transactions"}},
		{"malformed spread", Flags{Spread: "x", SpreadSet: true}, []string{"--spread"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.f.Resolve()
			var ue *UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("err %v, want a UsageError", err)
			}
			for _, f := range tc.flags {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("%q does not name %s", err, f)
				}
			}
		})
	}
}

func TestTheDefaultIsTheSeedWorkload(t *testing.T) {
	s, err := Flags{Records: 200}.Resolve()
	if err != nil || !reflect.DeepEqual(s, Seed()) {
		t.Fatalf("%+v, %v; want %+v", s, err, Seed())
	}
	if s.String() != "0:200" {
		t.Errorf("String %q", s.String())
	}
}

func TestStringRoundTrips(t *testing.T) {
	for _, in := range []string{"12x10", "0:200,3:50", "1:5", "0:1"} {
		parts, err := ParseSpread(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := (Spec{Parts: parts}).String(); got != in {
			t.Errorf("%q printed as %q", in, got)
		}
	}
}

func TestLayoutSplitsEveryPartitionOverTheTransactions(t *testing.T) {
	s := Spec{Parts: []Part{{0, 5}, {2, 2}}, Transactions: 2}
	want := []Transaction{{{0, 3}, {2, 1}}, {{0, 2}, {2, 1}}}
	if got := s.Layout(); !reflect.DeepEqual(got, want) {
		t.Fatalf("layout %v, want %v", got, want)
	}
	plain := Spec{Parts: []Part{{0, 5}}, Transactions: 0}
	if got := plain.Layout(); !reflect.DeepEqual(got, []Transaction{{{0, 5}}}) {
		t.Fatalf("plain layout %v", got)
	}
}

func TestValidateWantsTheTopicToHoldEveryPartition(t *testing.T) {
	s := Spec{Parts: []Part{{0, 1}, {12, 1}}, Transactions: 1}
	if err := s.Validate(12); err == nil || !strings.Contains(err.Error(), "--partitions") {
		t.Fatalf("Validate(12) = %v", err)
	}
	if err := s.Validate(13); err != nil {
		t.Fatal(err)
	}
}

func FuzzParseSpread(f *testing.F) {
	for _, s := range []string{"12x10", "0:200,3:50", "", "x", "1:2:3", "99999999999x1", "-0:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		parts, err := ParseSpread(in)
		if err != nil {
			return
		}
		total := 0
		for i, p := range parts {
			if p.Records <= 0 || p.Partition < 0 || (i > 0 && p.Partition <= parts[i-1].Partition) {
				t.Fatalf("%q parsed to %v", in, parts)
			}
			total += p.Records
		}
		if total > MaxRecords {
			t.Fatalf("%q: %d records", in, total)
		}
		again, err := ParseSpread(Spec{Parts: parts}.String())
		if err != nil || !reflect.DeepEqual(again, parts) {
			t.Fatalf("%q: round trip %v, %v", in, again, err)
		}
	})
}
