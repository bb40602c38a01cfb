package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ingot-dev/ingot/internal/store/codec"
	"github.com/jackc/pgx/v5"
	"time"

	"github.com/ingot-dev/ingot/internal/store"
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

const qInsertFlavor = "INSERT INTO flavors (" + flavorCols + ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)"

func flavorConflict(err error, f store.Flavor) error {
	switch code, name := constraint(err); {
	case code == unique && name == "flavors_pkey":
		return fmt.Errorf("flavor with ID %s: %w", f.ID, store.ErrExists)
	case code == unique && name == "flavors_name_key":
		return fmt.Errorf("flavor with name %s: %w", f.Name, store.ErrExists)
	}
	return fmt.Errorf("postgres: insert flavor %s: %w", f.ID, err)
}

// SeedFlavors implements store.Flavors.
func (st *Store) SeedFlavors(ctx context.Context, fs []store.Flavor) error {
	return st.write(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "UPDATE flavors SET seeded = FALSE WHERE seeded"); err != nil {
			return fmt.Errorf("postgres: seed flavors: %w", err)
		}
		for _, f := range fs {
			f.Seeded = true
			var created sql.NullString
			err := tx.QueryRow(ctx, "SELECT created_at FROM flavors WHERE id = $1", f.ID).Scan(&created)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("postgres: seed flavor %s: %w", f.ID, err)
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
				_, err = tx.Exec(ctx, `UPDATE flavors SET name = $1, vcpus = $2, ram_mb = $3, disk_gb = $4, swap_mb = $5,
					ephemeral_gb = $6, rxtx_factor = $7, is_public = $8, disabled = $9, description = $10, extra_specs = $11,
					resource_class = $12, seeded = $13 WHERE id = $14`, append(args[1:14], f.ID)...)
			} else {
				_, err = tx.Exec(ctx, qInsertFlavor, args...)
			}
			if err != nil {
				return flavorConflict(err, f)
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
	return st.write(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, qInsertFlavor, args...); err != nil {
			return flavorConflict(err, f)
		}
		return nil
	})
}

// GetFlavor implements store.Flavors.
func (st *Store) GetFlavor(ctx context.Context, id string) (store.Flavor, error) {
	f, err := scanFlavor(st.pool.QueryRow(ctx, "SELECT "+flavorCols+" FROM flavors WHERE id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Flavor{}, fmt.Errorf("flavor %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Flavor{}, fmt.Errorf("postgres: get flavor %s: %w", id, err)
	}
	return f, nil
}

// ListFlavors implements store.Flavors. Flavors are few (an operator's
// catalogue), so the whole list is read.
func (st *Store) ListFlavors(ctx context.Context, projectID string) ([]store.Flavor, error) {
	q, args := "SELECT "+flavorCols+" FROM flavors ORDER BY id", []any{}
	if projectID != "" {
		q = "SELECT " + flavorCols + ` FROM flavors WHERE is_public
			OR id IN (SELECT flavor_id FROM flavor_access WHERE project_id = $1) ORDER BY id`
		args = append(args, projectID)
	}
	rows, err := st.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: list flavors: %w", err)
	}
	defer rows.Close()
	var out []store.Flavor
	for rows.Next() {
		f, err := scanFlavor(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: list flavors: %w", err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// UpdateFlavor implements store.Flavors.
func (st *Store) UpdateFlavor(ctx context.Context, id string, mutate func(*store.Flavor) error) (store.Flavor, error) {
	var out store.Flavor
	err := st.write(ctx, func(tx pgx.Tx) error {
		f, err := scanFlavor(tx.QueryRow(ctx, "SELECT "+flavorCols+" FROM flavors WHERE id = $1", id))
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("flavor %s: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("postgres: update flavor %s: %w", id, err)
		}
		if err := mutate(&f); err != nil {
			return err
		}
		args, err := flavorArgs(f)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE flavors SET description = $1, extra_specs = $2, resource_class = $3 WHERE id = $4",
			args[10], args[11], args[12], id); err != nil {
			return fmt.Errorf("postgres: update flavor %s: %w", id, err)
		}
		out = f
		return nil
	})
	return out, err
}

// DeleteFlavor implements store.Flavors.
func (st *Store) DeleteFlavor(ctx context.Context, id string) error {
	return st.write(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM flavor_access WHERE flavor_id = $1", id); err != nil {
			return fmt.Errorf("postgres: delete flavor %s: %w", id, err)
		}
		return deleteOne(ctx, tx, "DELETE FROM flavors WHERE id = $1", id, "flavor")
	})
}

// deleteOne runs a DELETE of one row; ErrNotFound when it removed none.
func deleteOne(ctx context.Context, tx pgx.Tx, q, id, what string) error {
	res, err := tx.Exec(ctx, q, id)
	if err != nil {
		return fmt.Errorf("postgres: delete %s %s: %w", what, id, err)
	}
	if res.RowsAffected() == 0 {
		return fmt.Errorf("%s %s: %w", what, id, store.ErrNotFound)
	}
	return nil
}

func flavorExists(ctx context.Context, tx pgx.Tx, id string) error {
	var one int
	err := tx.QueryRow(ctx, "SELECT 1 FROM flavors WHERE id = $1", id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("flavor %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("postgres: flavor %s: %w", id, err)
	}
	return nil
}

// FlavorAccess implements store.Flavors.
func (st *Store) FlavorAccess(ctx context.Context, id string) ([]string, error) {
	var one int
	if err := st.pool.QueryRow(ctx, "SELECT 1 FROM flavors WHERE id = $1", id).Scan(&one); errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("flavor %s: %w", id, store.ErrNotFound)
	} else if err != nil {
		return nil, fmt.Errorf("postgres: flavor access %s: %w", id, err)
	}
	rows, err := st.pool.Query(ctx, "SELECT project_id FROM flavor_access WHERE flavor_id = $1 ORDER BY project_id", id)
	if err != nil {
		return nil, fmt.Errorf("postgres: flavor access %s: %w", id, err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, fmt.Errorf("postgres: flavor access %s: %w", id, err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// AddFlavorAccess implements store.Flavors.
func (st *Store) AddFlavorAccess(ctx context.Context, id, projectID string) error {
	return st.write(ctx, func(tx pgx.Tx) error {
		if err := flavorExists(ctx, tx, id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "INSERT INTO flavor_access (flavor_id, project_id) VALUES ($1, $2)", id, projectID); err != nil {
			if code, _ := constraint(err); code == unique {
				return fmt.Errorf("flavor access %s for %s: %w", id, projectID, store.ErrExists)
			}
			return fmt.Errorf("postgres: add flavor access %s: %w", id, err)
		}
		return nil
	})
}

// RemoveFlavorAccess implements store.Flavors.
func (st *Store) RemoveFlavorAccess(ctx context.Context, id, projectID string) error {
	return st.write(ctx, func(tx pgx.Tx) error {
		if err := flavorExists(ctx, tx, id); err != nil {
			return err
		}
		res, err := tx.Exec(ctx, "DELETE FROM flavor_access WHERE flavor_id = $1 AND project_id = $2", id, projectID)
		if err != nil {
			return fmt.Errorf("postgres: remove flavor access %s: %w", id, err)
		}
		if res.RowsAffected() == 0 {
			return fmt.Errorf("flavor access %s for %s: %w", id, projectID, store.ErrNotFound)
		}
		return nil
	})
}
