//go:build !linux

package trace

import (
	"errors"
	"os"
)

const canMap = false

type mapping struct{ all []byte }

func mapFile(*os.File, int64) (*mapping, []byte, error) {
	return nil, nil, errors.New("not mapped on this system")
}

func (m *mapping) release(int) {}

func (m *mapping) close() {}
