package core

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"testing"
)

// TestLimited: Nova's common.limited, offset then limit, over a list.
func TestLimited(t *testing.T) {
	items := []int{0, 1, 2, 3, 4}
	big := make([]int, MaxPage+5)
	cases := []struct {
		query string
		items []int
		want  []int // nil: a 400
	}{
		{"", items, items},
		{"limit=2", items, []int{0, 1}},
		{"offset=1&limit=1", items, []int{1}},
		{"offset=3", items, []int{3, 4}},
		{"offset=9", items, []int{}},
		{"limit=0", items, items},
		{"limit=9", items, items},
		{"limit=1&limit=3", items, []int{0, 1, 2}}, // the last value, as webob
		{"limit=-1", items, nil},
		{"offset=x", items, nil},
		{"limit=", items, nil},
		{"limit=2&limit=no", items, nil},
		{"limit=5000", big, big[:MaxPage]},
	}
	for _, c := range cases {
		q, err := url.ParseQuery(c.query)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Limited(q, c.items)
		if c.want == nil {
			var ae *APIError
			if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest {
				t.Errorf("%q: %v, %v; want a 400", c.query, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, %v; want %v", c.query, got, err, c.want)
		}
	}
}
