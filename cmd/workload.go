package cmd

import (
	"github.com/spf13/pflag"

	"github.com/kstranded/kstranded/internal/exitcode"
	"github.com/kstranded/kstranded/workload"
)

// bindWorkloadFlags binds the workload spec shared by repro, repro produce and simulate.
func bindWorkloadFlags(f *pflag.FlagSet, w *workload.Flags) {
	seed := workload.Seed()
	f.StringVar(&w.Spread, "spread", "", "records per partition: PxN puts N records on each of partitions 0..P-1 (12x10), P:N,... names them (0:200,3:50)")
	f.IntVar(&w.Records, "records", seed.Parts[0].Records, "records on --partition (the one-partition shorthand of --spread)")
	f.Int32Var(&w.Partition, "partition", seed.Parts[0].Partition, "partition of --records")
	f.IntVar(&w.Transactions, "transactions", seed.Transactions, "transactions the records are split over, each writing a chunk of every partition (0: not transactional)")
}

// resolveWorkload reads which workload flags were given and resolves the spec; a
// contradiction is a usage error naming both flags.
func resolveWorkload(f *pflag.FlagSet, w *workload.Flags) (workload.Spec, error) {
	w.SpreadSet, w.RecordsSet = f.Changed("spread"), f.Changed("records")
	w.PartitionSet, w.TransactionsSet = f.Changed("partition"), f.Changed("transactions")
	s, err := w.Resolve()
	if err != nil {
		return workload.Spec{}, exitcode.Usagef("%v", err)
	}
	return s, nil
}
