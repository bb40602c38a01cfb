package servers

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ingot-dev/ingot/internal/api/core"
	"github.com/ingot-dev/ingot/internal/store"
)

// volumeCreateError covers what resolveBoot's check cannot: a volume taken
// or deleted between that check and CreateServer's reservation.
func TestVolumeCreateError(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("volume v1 is held by server s9: %w", store.ErrVolumeInUse), "Invalid volume: volume v1 is held by server s9."},
		{fmt.Errorf("volume v2: %w", store.ErrNotFound), "Invalid block device mapping: volume v2 could not be found."},
	} {
		ae, ok := core.AsAPIError(volumeCreateError(c.err))
		if !ok || ae.Status != http.StatusBadRequest || ae.Message != c.want {
			t.Errorf("volumeCreateError(%v) = %v, want 400 %q", c.err, ae, c.want)
		}
	}
	other := errors.New("disk full")
	if got := volumeCreateError(other); got != other || strings.Contains(got.Error(), "Invalid") {
		t.Errorf("volumeCreateError(other) = %v, want it unchanged", got)
	}
}
