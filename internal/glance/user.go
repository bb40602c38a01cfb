package glance

import (
	"context"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/ingot-dev/ingot/internal/servicecatalog"
)

// AsUser reads images with each caller's own token, so that Glance
// applies visibility and ownership for the caller's project, as Nova's
// image API does with the request's context. Safe for concurrent use.
type AsUser struct {
	sc      *gophercloud.ServiceClient
	timeout time.Duration
}

// NewAsUser wraps Glance's client from the catalog (servicecatalog.Image);
// its own token is never sent. timeout <= 0 means DefaultTimeout.
func NewAsUser(sc *gophercloud.ServiceClient, timeout time.Duration) *AsUser {
	return &AsUser{sc: sc, timeout: timeout}
}

func (u *AsUser) client(token string) *Client {
	return New(servicecatalog.WithToken(u.sc, token), u.timeout)
}

// GetImage is Client.GetImage with the caller's token.
func (u *AsUser) GetImage(ctx context.Context, token, id string) (Image, error) {
	return u.client(token).GetImage(ctx, id)
}

// ListImages is Client.ListImages with the caller's token.
func (u *AsUser) ListImages(ctx context.Context, token string, f ListFilter) ([]Image, error) {
	return u.client(token).ListImages(ctx, f)
}

// UpdateProperties is Client.UpdateProperties with the caller's token.
func (u *AsUser) UpdateProperties(ctx context.Context, token, id string, set map[string]string, remove []string) (Image, error) {
	return u.client(token).UpdateProperties(ctx, id, set, remove)
}

// DeleteImage is Client.DeleteImage with the caller's token.
func (u *AsUser) DeleteImage(ctx context.Context, token, id string) error {
	return u.client(token).DeleteImage(ctx, id)
}
