package sqlstore

import (
	"context"

	"github.com/ingot-dev/ingot/internal/store"
)

// QuotaClass implements store.QuotaClasses.
func (st *Store) QuotaClass(ctx context.Context, class string) (store.Limits, error) {
	rows, err := st.B.Query(ctx, "SELECT resource, hard_limit FROM quota_classes WHERE class_name = ?", class)
	if err != nil {
		return nil, st.errorf("quota class %s: %w", class, err)
	}
	out, err := scanLimits(rows)
	if err != nil {
		return nil, st.errorf("quota class %s: %w", class, err)
	}
	return out, nil
}

// SetQuotaClass implements store.QuotaClasses.
func (st *Store) SetQuotaClass(ctx context.Context, class string, limits store.Limits) error {
	return st.B.Write(ctx, func(tx Tx) error {
		for res, lim := range limits {
			if _, err := tx.ExecContext(ctx, `INSERT INTO quota_classes (class_name, resource, hard_limit) VALUES (?, ?, ?)
				ON CONFLICT (class_name, resource) DO UPDATE SET hard_limit = excluded.hard_limit`, class, res, lim); err != nil {
				return st.errorf("set quota class %s %s: %w", class, res, err)
			}
		}
		return nil
	})
}
