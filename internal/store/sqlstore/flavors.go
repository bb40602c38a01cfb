package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ingot-dev/ingot/internal/store"
	"github.com/ingot-dev/ingot/internal/store/codec"
)

const flavorCols = `id, name, vcpus, ram_mb, disk_gb, swap_mb, ephemeral_gb, rxtx_factor, is_public, disabled,
	description, extra_specs, resource_class, seeded, created_at`

func scanFlavor(sc codec.Scanner) (store.Flavor, error) {
	var f store.Flavor
	var desc, created sql.NullString
	var specs string
	if err := sc.Scan(&f.ID, &f.Name, &f.VCPUs, &f.RAMMB, &f.DiskGB, &f.SwapMB, &f.EphemeralGB, &f.RxTxFactor,
		&f.IsPublic, &f.Disabled, &desc, &specs, &f.ResourceClass, &f.Seeded, &created); err != nil {
		return f, err
	}
	if desc.Valid {
		d := desc.String
		f.Description = &d
	}
	if err := json.Unmarshal([]byte(specs), &f.ExtraSpecs); err != nil {
		return f, fmt.Errorf("flavor %s: extra specs: %w", f.ID, err)
	}
	if f.ExtraSpecs == nil {
		f.ExtraSpecs = map[string]string{}
	}
	var err error
	f.CreatedAt, err = codec.ParseTime(created)
	return f, err
}

func flavorArgs(f store.Flavor) ([]any, error) {
	specs := f.ExtraSpecs
	if specs == nil {
		specs = map[string]string{}
	}
	js, err := json.Marshal(specs)
	if err != nil {
		return nil, fmt.Errorf("flavor %s: extra specs: %w", f.ID, err)
	}
	if f.CreatedAt.IsZero() {
		f.CreatedAt = time.Now()
	}
	var desc any
	if f.Description != nil {
		desc = *f.Description
	}
	return []any{f.ID, f.Name, f.VCPUs, f.RAMMB, f.DiskGB, f.SwapMB, f.EphemeralGB, f.RxTxFactor, f.IsPublic,
		f.Disabled, desc, string(js), f.ResourceClass, f.Seeded, codec.TimeNN(f.CreatedAt)}, nil
}

const qInsertFlavor = "INSERT INTO flavors (" + flavorCols + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

func (st *Store) flavorConflict(err error, f store.Flavor) error {
	switch name, _ := st.B.Unique(err); name {
	case "flavors.id", "flavors_pkey":
		return fmt.Errorf("flavor with ID %s: %w", f.ID, store.ErrExists)
	case "flavors.name", "flavors_name_key":
		return fmt.Errorf("flavor with name %s: %w", f.Name, store.ErrExists)
	}
	return st.errorf("insert flavor %s: %w", f.ID, err)
}

// SeedFlavors implements store.Flavors.
func (st *Store) SeedFlavors(ctx context.Context, fs []store.Flavor) error {
	return st.B.Write(ctx, func(tx Tx) error {
		if _, err := tx.ExecContext(ctx, "UPDATE flavors SET seeded = FALSE WHERE seeded"); err != nil {
			return st.errorf("seed flavors: %w", err)
		}
		for _, f := range fs {
			f.Seeded = true
			var created sql.NullString
			err := tx.QueryRowContext(ctx, "SELECT created_at FROM flavors WHERE id = ?", f.ID).Scan(&created)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return st.errorf("seed flavor %s: %w", f.ID, err)
			}
			exists := err == nil
			if exists {
				// Replaced in place (its access list stays), created when it first appeared.
				if f.CreatedAt, err = codec.ParseTime(created); err != nil {
					return err
				}
			}
			args, err := flavorArgs(f)
			if err != nil {
				return err
			}
			if exists {
				_, err = tx.ExecContext(ctx, `UPDATE flavors SET name = ?, vcpus = ?, ram_mb = ?, disk_gb = ?, swap_mb = ?,
					ephemeral_gb = ?, rxtx_factor = ?, is_public = ?, disabled = ?, description = ?, extra_specs = ?,
					resource_class = ?, seeded = ? WHERE id = ?`, append(args[1:14], f.ID)...)
			} else {
				_, err = tx.ExecContext(ctx, qInsertFlavor, args...)
			}
			if err != nil {
				return st.flavorConflict(err, f)
			}
		}
		return nil
	})
}

// CreateFlavor implements store.Flavors.
func (st *Store) CreateFlavor(ctx context.Context, f store.Flavor) error {
	f.Seeded = false
	args, err := flavorArgs(f)
	if err != nil {
		return err
	}
	return st.B.Write(ctx, func(tx Tx) error {
		if _, err := tx.ExecContext(ctx, qInsertFlavor, args...); err != nil {
			return st.flavorConflict(err, f)
		}
		return nil
	})
}

// GetFlavor implements store.Flavors.
func (st *Store) GetFlavor(ctx context.Context, id string) (store.Flavor, error) {
	f, err := scanFlavor(st.B.QueryRow(ctx, "SELECT "+flavorCols+" FROM flavors WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Flavor{}, fmt.Errorf("flavor %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Flavor{}, st.errorf("get flavor %s: %w", id, err)
	}
	return f, nil
}

// ListFlavors implements store.Flavors. Flavors are few (an operator's
// catalogue), so the whole list is read.
func (st *Store) ListFlavors(ctx context.Context, projectID string) ([]store.Flavor, error) {
	q, args := "SELECT "+flavorCols+" FROM flavors ORDER BY id", []any{}
	if projectID != "" {
		q = "SELECT " + flavorCols + ` FROM flavors WHERE is_public
			OR id IN (SELECT flavor_id FROM flavor_access WHERE project_id = ?) ORDER BY id`
		args = append(args, projectID)
	}
	rows, err := st.B.Query(ctx, q, args...)
	if err != nil {
		return nil, st.errorf("list flavors: %w", err)
	}
	defer rows.Close()
	var out []store.Flavor
	for rows.Next() {
		f, err := scanFlavor(rows)
		if err != nil {
			return nil, st.errorf("list flavors: %w", err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// UpdateFlavor implements store.Flavors.
func (st *Store) UpdateFlavor(ctx context.Context, id string, mutate func(*store.Flavor) error) (store.Flavor, error) {
	var out store.Flavor
	err := st.B.Write(ctx, func(tx Tx) error {
		f, err := scanFlavor(tx.QueryRowContext(ctx, "SELECT "+flavorCols+" FROM flavors WHERE id = ?", id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("flavor %s: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return st.errorf("update flavor %s: %w", id, err)
		}
		if err := mutate(&f); err != nil {
			return err
		}
		args, err := flavorArgs(f)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE flavors SET description = ?, extra_specs = ?, resource_class = ? WHERE id = ?",
			args[10], args[11], args[12], id); err != nil {
			return st.errorf("update flavor %s: %w", id, err)
		}
		out = f
		return nil
	})
	return out, err
}

// DeleteFlavor implements store.Flavors.
func (st *Store) DeleteFlavor(ctx context.Context, id string) error {
	return st.B.Write(ctx, func(tx Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM flavor_access WHERE flavor_id = ?", id); err != nil {
			return st.errorf("delete flavor %s: %w", id, err)
		}
		return st.deleteOne(ctx, tx, "DELETE FROM flavors WHERE id = ?", id, "flavor")
	})
}

// deleteOne runs a DELETE of one row; ErrNotFound when it removed none.
func (st *Store) deleteOne(ctx context.Context, tx Tx, q, id, what string) error {
	res, err := tx.ExecContext(ctx, q, id)
	if err != nil {
		return st.errorf("delete %s %s: %w", what, id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return st.errorf("delete %s %s: %w", what, id, err)
	}
	if n == 0 {
		return fmt.Errorf("%s %s: %w", what, id, store.ErrNotFound)
	}
	return nil
}

func (st *Store) flavorExists(ctx context.Context, tx Tx, id string) error {
	var one int
	err := tx.QueryRowContext(ctx, "SELECT 1 FROM flavors WHERE id = ?", id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("flavor %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return st.errorf("flavor %s: %w", id, err)
	}
	return nil
}

// FlavorAccess implements store.Flavors.
func (st *Store) FlavorAccess(ctx context.Context, id string) ([]string, error) {
	var one int
	if err := st.B.QueryRow(ctx, "SELECT 1 FROM flavors WHERE id = ?", id).Scan(&one); errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("flavor %s: %w", id, store.ErrNotFound)
	} else if err != nil {
		return nil, st.errorf("flavor access %s: %w", id, err)
	}
	return st.texts(ctx, "flavor access "+id, "SELECT project_id FROM flavor_access WHERE flavor_id = ? ORDER BY project_id", id)
}

// AddFlavorAccess implements store.Flavors.
func (st *Store) AddFlavorAccess(ctx context.Context, id, projectID string) error {
	return st.B.Write(ctx, func(tx Tx) error {
		if err := st.flavorExists(ctx, tx, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO flavor_access (flavor_id, project_id) VALUES (?, ?)", id, projectID); err != nil {
			if _, ok := st.B.Unique(err); ok {
				return fmt.Errorf("flavor access %s for %s: %w", id, projectID, store.ErrExists)
			}
			return st.errorf("add flavor access %s: %w", id, err)
		}
		return nil
	})
}

// RemoveFlavorAccess implements store.Flavors.
func (st *Store) RemoveFlavorAccess(ctx context.Context, id, projectID string) error {
	return st.B.Write(ctx, func(tx Tx) error {
		if err := st.flavorExists(ctx, tx, id); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, "DELETE FROM flavor_access WHERE flavor_id = ? AND project_id = ?", id, projectID)
		if err != nil {
			return st.errorf("remove flavor access %s: %w", id, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return st.errorf("remove flavor access %s: %w", id, err)
		} else if n == 0 {
			return fmt.Errorf("flavor access %s for %s: %w", id, projectID, store.ErrNotFound)
		}
		return nil
	})
}
