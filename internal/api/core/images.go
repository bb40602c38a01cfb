package core

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/ingot-dev/ingot/internal/glance"
)

// Images is Glance, read with the caller's token (image.backend glance):
// Glance decides what the caller's project sees, as it does for Nova.
type Images interface {
	GetImage(ctx context.Context, token, id string) (glance.Image, error)
	ListImages(ctx context.Context, token string, f glance.ListFilter) ([]glance.Image, error)
	UpdateProperties(ctx context.Context, token, id string, set map[string]string, remove []string) (glance.Image, error)
	DeleteImage(ctx context.Context, token, id string) error
}

// Token is the caller's Keystone token, for the calls ingot makes on the
// caller's behalf ("" in noauth).
func (r *Request) Token() string {
	return r.Header.Get("X-Auth-Token")
}

// GlanceError answers what Glance refused: notFound for an image the
// caller may not see, 503 while Glance is away (nothing was recorded),
// 403 for its policy; anything else is a 500 with Glance's words logged.
func GlanceError(err, notFound error) error {
	switch {
	case errors.Is(err, glance.ErrImageNotFound):
		return notFound
	case errors.Is(err, glance.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		return Unavailable("The image service is unavailable; try again later.")
	case errors.Is(err, glance.ErrForbidden):
		return &APIError{Status: http.StatusForbidden, Message: "The image service refused the request."}
	}
	return fmt.Errorf("glance: %w", err)
}
