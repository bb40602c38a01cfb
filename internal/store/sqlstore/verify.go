package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Verify compares every row of every copied table in src and dst (the
// columns both have, booleans as 0/1; dst's derived columns recomputed
// from src), and returns dst's row counts.
func Verify(ctx context.Context, src, dst DB) (Counts, error) {
	stx, err := src.BeginTx(ctx, snapshotOpts(src.Dialect))
	if err != nil {
		return nil, err
	}
	defer stx.Rollback() //nolint:errcheck // read only
	dtx, err := dst.BeginTx(ctx, snapshotOpts(dst.Dialect))
	if err != nil {
		return nil, err
	}
	defer dtx.Rollback() //nolint:errcheck // read only
	counts := Counts{}
	for _, t := range CopyTables {
		p, err := planTable(ctx, stx, src.Dialect, dtx, dst.Dialect, t)
		if err != nil {
			return nil, err
		}
		want, err := p.canonical(ctx, stx, p.src, true)
		if err != nil {
			return nil, fmt.Errorf("verify %s: source: %w", t, err)
		}
		back := plan{table: t, src: append(slices.Clone(p.dst), derivedCols(p.derive)...)}
		got, err := back.canonical(ctx, dtx, back.src, false)
		if err != nil {
			return nil, fmt.Errorf("verify %s: target: %w", t, err)
		}
		if i := firstDiff(want, got); i >= 0 {
			return nil, fmt.Errorf("verify %s: %d rows in the source, %d in the target; first difference at sorted row %d", t, len(want), len(got), i)
		}
		counts[t] = len(got)
	}
	return counts, nil
}

func derivedCols(names []string) []column {
	out := make([]column, len(names))
	for i, n := range names {
		out[i] = column{name: n, jsonb: true}
	}
	return out
}

// canonical reads every row of p as one string each, sorted: values in a
// form both dialects agree on. withDerived appends p.derive computed from
// the row, as the copy wrote them.
func (p plan) canonical(ctx context.Context, tx *sql.Tx, cols []column, withDerived bool) ([]string, error) {
	rows, err := plan{table: p.table, src: cols}.selectAll(ctx, tx)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		var b strings.Builder
		for i, v := range vals {
			b.WriteString(canon(v, cols[i].jsonb))
			b.WriteByte(0)
		}
		if withDerived {
			for _, c := range p.derive {
				v, err := p.derive1(c, vals)
				if err != nil {
					return nil, err
				}
				b.WriteString(canon(v, true))
				b.WriteByte(0)
			}
		}
		out = append(out, b.String())
	}
	slices.Sort(out)
	return out, rows.Err()
}

// canon is v in a form both dialects give alike: booleans as 0/1, JSONB
// re-encoded (PostgreSQL spaces its output).
func canon(v any, jsonb bool) string {
	switch x := toTarget(v, false).(type) {
	case nil:
		return "\x01NULL"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		if jsonb {
			var j any
			if json.Unmarshal([]byte(x), &j) == nil {
				b, _ := json.Marshal(j)
				return string(b)
			}
		}
		return x
	default:
		return fmt.Sprintf("%T:%v", x, x)
	}
}

func firstDiff(a, b []string) int {
	for i := range max(len(a), len(b)) {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	return -1
}
