package store

import "context"

// DefaultQuotaClass is the quota class whose limits every project gets
// (over the configured defaults, under its own overrides), as Nova's.
const DefaultQuotaClass = "default"

// QuotaClasses keeps os-quota-class-sets limits.
type QuotaClasses interface {
	// QuotaClass returns the limits set for class (empty when none).
	QuotaClass(ctx context.Context, class string) (Limits, error)
	// SetQuotaClass stores limits for class, replacing those of the same
	// resources and keeping the others, in one transaction. Idempotent.
	SetQuotaClass(ctx context.Context, class string, limits Limits) error
}
