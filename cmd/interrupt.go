package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/kstranded/kstranded/internal/exitcode"
)

// interrupted is the result of a step a signal may have cut short: once ctx is
// cancelled (SIGINT, SIGTERM), ErrInterrupted (exit 130) with the step's own error
// kept in the message; else err as it is. The client libraries answer a cancelled
// context with errors of their own (a DescribeGroups shard error, a transport
// failure), which would otherwise be reported as operational errors.
func interrupted(ctx context.Context, err error) error {
	if ctx.Err() == nil || errors.Is(err, exitcode.ErrInterrupted) {
		return err
	}
	if err == nil {
		return exitcode.ErrInterrupted
	}
	return fmt.Errorf("%w: %v", exitcode.ErrInterrupted, err)
}
