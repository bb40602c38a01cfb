// Package glance is ingot's adapter to OpenStack Glance: the image reads a
// build needs (status, visibility and owner as Glance enforces them for the
// token, min_disk and min_ram, disk_format, properties with trait:*), every
// error classified here; nothing above sees gophercloud or HTTP.
package glance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

// The kinds of error the core sees: every error a Client method returns
// wraps one of them, or ctx.Err() when the caller's ctx ended first.
var (
	// ErrImageNotFound: no such image, or one the token may not see (a
	// private image of another project), as Nova's ImageNotFound.
	ErrImageNotFound = errors.New("glance: image not found")
	// ErrImageNotActive: the image exists but cannot boot (queued,
	// saving, killed, deactivated…), as Nova's ImageNotActive.
	ErrImageNotActive = errors.New("glance: image not active")
	// ErrFlavorDiskTooSmall and ErrFlavorMemoryTooSmall: the flavor is
	// below the image's min_disk or min_ram (Nova's
	// FlavorDiskSmallerThanMinDisk and FlavorMemoryTooSmall).
	ErrFlavorDiskTooSmall   = errors.New("glance: flavor's disk is smaller than the image's min_disk")
	ErrFlavorMemoryTooSmall = errors.New("glance: flavor's memory is smaller than the image's min_ram")
	ErrNotAuthorized        = errors.New("glance: not authorized (token refused)")
	ErrForbidden            = errors.New("glance: forbidden by policy")
	ErrBadRequest           = errors.New("glance: bad request")
	// ErrUnavailable: no answer, or a 5xx: transient.
	ErrUnavailable = errors.New("glance: unavailable")
	// ErrFlavorDiskSmallerThanImage: the image's data is larger than the
	// flavor's disk (Nova's FlavorDiskSmallerThanImage).
	ErrFlavorDiskSmallerThanImage = errors.New("glance: flavor's disk is smaller than the image")
)

// DefaultTimeout bounds each HTTP call.
const DefaultTimeout = 30 * time.Second

// Image is a Glance image as ingot reads it.
type Image struct {
	ID              string
	Name            string
	Status          string // active, queued, saving, killed, deactivated, …
	Visibility      string // public, private, shared, community
	Owner           string // project id
	DiskFormat      string
	ContainerFormat string
	MinDiskGB       int
	MinRAMMB        int
	SizeBytes       int64
	VirtualSize     int64
	Checksum        string
	Tags            []string
	Protected       bool
	Hidden          bool // os_hidden
	CreatedAt       time.Time
	UpdatedAt       time.Time
	// Properties are the image's other top-level keys with string values
	// (hw_*, img_*, trait:*, kernel_id, …).
	Properties map[string]string
}

// Active is the status an image must have to boot.
const Active = "active"

// Traits returns the image's trait:NAME=required and =forbidden properties,
// sorted, as Nova merges them into the scheduling request.
func (i Image) Traits() (required, forbidden []string) {
	for k, v := range i.Properties {
		name, ok := strings.CutPrefix(k, "trait:")
		if !ok || name == "" {
			continue
		}
		switch v {
		case "required":
			required = append(required, name)
		case "forbidden":
			forbidden = append(forbidden, name)
		}
	}
	sort.Strings(required)
	sort.Strings(forbidden)
	return required, forbidden
}

// CheckFlavor refuses a flavor below the image's minimums in Nova's order
// (memory, then the image's size, then min_disk); a flavor disk of 0 skips
// the disk checks, as Nova's does.
func (i Image) CheckFlavor(diskGB, ramMB int) error {
	if ramMB < i.MinRAMMB {
		return fmt.Errorf("%w: image %s needs %d MiB, the flavor has %d", ErrFlavorMemoryTooSmall, i.ID, i.MinRAMMB, ramMB)
	}
	if diskGB <= 0 {
		return nil
	}
	if i.SizeBytes > int64(diskGB)<<30 {
		return fmt.Errorf("%w: image %s is %d bytes, the flavor's disk %d GiB", ErrFlavorDiskSmallerThanImage, i.ID, i.SizeBytes, diskGB)
	}
	if diskGB < i.MinDiskGB {
		return fmt.Errorf("%w: image %s needs %d GiB, the flavor has %d", ErrFlavorDiskTooSmall, i.ID, i.MinDiskGB, diskGB)
	}
	return nil
}

// Client reads images with one token source (servicecatalog.Image, or
// servicecatalog.WithToken for a user's). Safe for concurrent use.
type Client struct {
	sc      *gophercloud.ServiceClient
	timeout time.Duration
}

// New wraps an image ServiceClient; timeout <= 0 means DefaultTimeout.
func New(sc *gophercloud.ServiceClient, timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Client{sc: sc, timeout: timeout}
}

// GetImage reads an image the token may see (ErrImageNotFound otherwise).
func (c *Client) GetImage(ctx context.Context, id string) (Image, error) {
	callCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	img, err := images.Get(callCtx, c.sc, id).Extract()
	if err != nil {
		return Image{}, classify(ctx, "get image "+id, err)
	}
	return convert(img), nil
}

// BootableImage is GetImage that also refuses an image not active
// (ErrImageNotActive), as Nova checks imageRef on create and rebuild.
func (c *Client) BootableImage(ctx context.Context, id string) (Image, error) {
	img, err := c.GetImage(ctx, id)
	if err != nil {
		return img, err
	}
	if img.Status != Active {
		return img, fmt.Errorf("%w: image %s is %s", ErrImageNotActive, id, img.Status)
	}
	return img, nil
}

// UpdateProperties adds or changes set and removes remove among the image's
// properties in one patch, as Nova's image metadata proxy writes them;
// Glance's policy decides who may (ErrForbidden otherwise).
func (c *Client) UpdateProperties(ctx context.Context, id string, set map[string]string, remove []string) (Image, error) {
	var patch images.UpdateOpts
	for _, k := range slices.Sorted(maps.Keys(set)) {
		patch = append(patch, images.UpdateImageProperty{Op: images.AddOp, Name: k, Value: set[k]})
	}
	for _, k := range remove {
		patch = append(patch, images.UpdateImageProperty{Op: images.RemoveOp, Name: k})
	}
	if len(patch) == 0 {
		return c.GetImage(ctx, id)
	}
	callCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	img, err := images.Update(callCtx, c.sc, id, patch).Extract()
	if err != nil {
		return Image{}, classify(ctx, "update image "+id, err)
	}
	return convert(img), nil
}

// DeleteImage deletes an image the token may delete (ErrForbidden for
// another project's, ErrImageNotFound for one it cannot see).
func (c *Client) DeleteImage(ctx context.Context, id string) error {
	callCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if err := images.Delete(callCtx, c.sc, id).ExtractErr(); err != nil {
		return classify(ctx, "delete image "+id, err)
	}
	return nil
}

// ListFilter narrows ListImages; empty fields do not filter.
type ListFilter struct {
	Name       string
	Status     string
	Visibility string // all, public, private, shared, community
	Owner      string
}

// ListImages lists the images visible to the token's project (every page).
func (c *Client) ListImages(ctx context.Context, f ListFilter) ([]Image, error) {
	callCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	opts := images.ListOpts{Name: f.Name, Status: images.ImageStatus(f.Status),
		Visibility: images.ImageVisibility(f.Visibility), Owner: f.Owner}
	var out []Image
	err := images.List(c.sc, opts).EachPage(callCtx, func(_ context.Context, p pagination.Page) (bool, error) {
		page, err := images.ExtractImages(p)
		for i := range page {
			out = append(out, convert(&page[i]))
		}
		return true, err
	})
	if err != nil {
		return nil, classify(ctx, "list images", err)
	}
	return out, nil
}

// glanceKeys are Glance's own keys that gophercloud leaves among the
// properties (direct_url would show the store's paths).
var glanceKeys = map[string]bool{"direct_url": true, "stores": true, "os_hash_algo": true, "os_hash_value": true}

func convert(img *images.Image) Image {
	props := map[string]string{}
	for k, v := range img.Properties {
		if s, ok := v.(string); ok && !glanceKeys[k] {
			props[k] = s
		}
	}
	return Image{ID: img.ID, Name: img.Name, Status: string(img.Status), Visibility: string(img.Visibility),
		Owner: img.Owner, DiskFormat: img.DiskFormat, ContainerFormat: img.ContainerFormat,
		MinDiskGB: img.MinDiskGigabytes, MinRAMMB: img.MinRAMMegabytes, SizeBytes: img.SizeBytes,
		VirtualSize: img.VirtualSize, Checksum: img.Checksum, Tags: img.Tags, Protected: img.Protected,
		Hidden: img.Hidden, CreatedAt: img.CreatedAt, UpdatedAt: img.UpdatedAt, Properties: props}
}

// classify maps a gophercloud error to a kind, keeping Glance's text.
func classify(ctx context.Context, op string, err error) error {
	var ue gophercloud.ErrUnexpectedResponseCode
	if !errors.As(err, &ue) {
		var pue *gophercloud.ErrUnexpectedResponseCode
		if !errors.As(err, &pue) || pue == nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return fmt.Errorf("glance: %s: %w", op, ctxErr)
			}
			return fmt.Errorf("%w: %s: %v", ErrUnavailable, op, err)
		}
		ue = *pue
	}
	kind := ErrBadRequest
	switch s := ue.Actual; {
	case s == http.StatusNotFound:
		kind = ErrImageNotFound
	case s == http.StatusUnauthorized:
		kind = ErrNotAuthorized
	case s == http.StatusForbidden:
		kind = ErrForbidden
	case s >= 500 || s == http.StatusTooManyRequests:
		kind = ErrUnavailable
	}
	body := ue.Body
	if len(body) > 300 {
		body = body[:300]
	}
	return fmt.Errorf("%w: %s: %d %s", kind, op, ue.Actual, strings.Join(strings.Fields(string(body)), " "))
}
