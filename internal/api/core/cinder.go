package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/ingot-dev/ingot/internal/cinder"
)

// CinderError is what Cinder did not answer as it should, for a request
// that read or changed a volume: 503 while Cinder is away or failing
// (nothing was recorded; the client may retry), else a 500 with Cinder's
// words logged, what naming the volume.
func CinderError(err error, what string) error {
	if errors.Is(err, cinder.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
		return Unavailable("The volume service is unavailable; try again later.")
	}
	return fmt.Errorf("%s: %w", what, err)
}
