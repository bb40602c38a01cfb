package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/ingot-dev/ingot/internal/lifecycle"
)

// ErrQuotaExceeded: the request would pass a quota limit. The error is a
// *QuotaExceededError, which says which.
var ErrQuotaExceeded = errors.New("store: quota exceeded")

// Quota resources. A per-resource-class limit on instances is named
// ClassPrefix + the Ironic resource class (class:baremetal).
const (
	ResInstances     = "instances"
	ResCores         = "cores"
	ResRAM           = "ram"
	ResKeyPairs      = "key_pairs"
	ResMetadataItems = "metadata_items"
	ClassPrefix      = "class:"
)

// Unlimited is the limit of a resource without a quota.
const Unlimited = -1

// Limits maps a quota resource to its limit (Unlimited, or 0 and more). A
// resource that is absent is unlimited.
type Limits map[string]int

// Get is the limit of res (Unlimited when absent).
func (l Limits) Get(res string) int {
	if v, ok := l[res]; ok {
		return v
	}
	return Unlimited
}

// QuotaExceededError says which limit a request would pass, in Nova's words.
type QuotaExceededError struct {
	Resource        string
	Requested, Used int
	Limit           int
}

func (e *QuotaExceededError) Error() string {
	return fmt.Sprintf("Quota exceeded for %s: Requested %d, but already used %d of %d %s",
		e.Resource, e.Requested, e.Used, e.Limit, e.Resource)
}

func (e *QuotaExceededError) Is(target error) bool { return target == ErrQuotaExceeded }

// Usage is what a project's live servers (not deleted, no delete requested)
// use: what the instances, cores and ram quotas count.
type Usage struct {
	Instances, Cores, RAM int
	ByClass               map[string]int // resource class -> instances
}

// Of returns the usage counted against res.
func (u Usage) Of(res string) int {
	switch res {
	case ResInstances:
		return u.Instances
	case ResCores:
		return u.Cores
	case ResRAM:
		return u.RAM
	}
	if rc, ok := strings.CutPrefix(res, ClassPrefix); ok {
		return u.ByClass[rc]
	}
	return 0
}

// MultiCreator is what a store implements to create the servers of one
// multiple create atomically (Nova's min_count/max_count); the API refuses
// max_count > 1 on a store without it rather than create them one by one.
type MultiCreator interface {
	// CreateServersWithin is CreateServerWithin for the servers of one
	// multiple create (all of one project): in one transaction it creates
	// the first n of them, n the largest count from minCount to
	// len(servers) the quota allows; a *QuotaExceededError (counting
	// minCount servers) when not even minCount fit. On any error nothing
	// is written.
	CreateServersWithin(ctx context.Context, servers []*lifecycle.Server, minCount int, defaults Limits) (int, error)
}

// FitServers is how many of servers (the first n, n from minCount to
// len(servers)) fit in the limits on top of the usage; a
// *QuotaExceededError for minCount of them when fewer fit. Each server
// counts its own sizes.
func FitServers(u Usage, l Limits, servers []*lifecycle.Server, minCount int) (int, error) {
	u.ByClass = maps.Clone(u.ByClass)
	if u.ByClass == nil {
		u.ByClass = map[string]int{}
	}
	for i, s := range servers {
		if err := CheckServer(u, l, s.Spec.VCPUs, s.Spec.RAMMB, s.Spec.ResourceClass); err != nil {
			if i >= minCount {
				return i, nil
			}
			var qe *QuotaExceededError
			if errors.As(err, &qe) {
				// Nova's words for a multiple create: what the first
				// minCount servers would need in all.
				per := 1
				switch {
				case qe.Resource == ResCores:
					per = s.Spec.VCPUs
				case qe.Resource == ResRAM:
					per = s.Spec.RAMMB
				}
				qe.Requested = per * minCount
				qe.Used = qe.Used - i*per
			}
			return 0, err
		}
		u.Instances++
		u.Cores += s.Spec.VCPUs
		u.RAM += s.Spec.RAMMB
		u.ByClass[s.Spec.ResourceClass]++
	}
	return len(servers), nil
}

// CheckServer compares a new server of vcpus, ram and resource class with
// the usage and limits (instances, cores, ram, then the class), as Nova
// orders them; nil when it fits.
func CheckServer(u Usage, l Limits, vcpus, ram int, rc string) error {
	for _, c := range []struct {
		res string
		n   int
	}{{ResInstances, 1}, {ResCores, vcpus}, {ResRAM, ram}, {ClassPrefix + rc, 1}} {
		lim := l.Get(c.res)
		if lim < 0 || c.n == 0 {
			continue
		}
		if used := u.Of(c.res); used+c.n > lim {
			return &QuotaExceededError{Resource: c.res, Requested: c.n, Used: used, Limit: lim}
		}
	}
	return nil
}

// Quotas keeps each project's quota overrides and counts its usage.
type Quotas interface {
	// CreateServerWithin is CreateServer with the project's quota checked
	// in the same transaction, so two creates racing for the last unit get
	// one success and one *QuotaExceededError. The limits are defaults
	// overlaid with the project's stored overrides; s.Spec.VCPUs, RAMMB and
	// ResourceClass are what the server counts. On any error nothing is written.
	CreateServerWithin(ctx context.Context, s *lifecycle.Server, defaults Limits) error
	// Usage counts a project's live servers.
	Usage(ctx context.Context, projectID string) (Usage, error)
	// QuotaOverrides returns the limits an admin set for a project (empty
	// when none).
	QuotaOverrides(ctx context.Context, projectID string) (Limits, error)
	// SetQuotas stores limits for a project, replacing those of the same
	// resources and keeping the others. Idempotent.
	SetQuotas(ctx context.Context, projectID string, limits Limits) error
	// DeleteQuotas removes a project's overrides (back to the defaults). Idempotent.
	DeleteQuotas(ctx context.Context, projectID string) error
}

// Keypair is an SSH (or x509) public key of one user, as os-keypairs shows it.
type Keypair struct {
	UserID      string
	Name        string
	Type        string // "ssh" or "x509"
	PublicKey   string
	Fingerprint string
	CreatedAt   time.Time
}

// Keypairs is the keypair registry: names are unique per user.
type Keypairs interface {
	// CreateKeypair stores a keypair unless the user already has limit
	// keypairs (a *QuotaExceededError for key_pairs; limit < 0 is
	// unlimited), checked in the same transaction. ErrExists when the
	// user has one of that name.
	CreateKeypair(ctx context.Context, kp Keypair, limit int) error
	// GetKeypair returns one keypair. ErrNotFound when the user has none of that name.
	GetKeypair(ctx context.Context, userID, name string) (Keypair, error)
	// ListKeypairs pages a user's keypairs by name (after = last name of
	// the previous page; limit <= 0 or > 1000 means 1000).
	ListKeypairs(ctx context.Context, userID, after string, limit int) ([]Keypair, error)
	// DeleteKeypair removes one. ErrNotFound when the user has none of that name.
	DeleteKeypair(ctx context.Context, userID, name string) error
	// CountKeypairs counts a user's keypairs.
	CountKeypairs(ctx context.Context, userID string) (int, error)
}
