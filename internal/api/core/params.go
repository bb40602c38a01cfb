package core

import (
	"net/url"
	"strconv"
)

// IntParam reads a non-negative integer query parameter ("" is 0).
func IntParam(v, name string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, BadRequest("Invalid input for query parameters %s. Value: %s. It must be a non-negative integer.", name, v)
	}
	return n, nil
}

// Limited is Nova's common.limited: the items from the query's offset, at
// most its limit of them (a limit that is 0 or absent, or above MaxPage,
// is MaxPage). Every value given must be a non-negative integer (else a
// 400, Nova's query schema); the last one counts, as in Nova.
func Limited[T any](q url.Values, items []T) ([]T, error) {
	var offset, limit int
	for name, p := range map[string]*int{"offset": &offset, "limit": &limit} {
		for _, v := range q[name] {
			if v == "" {
				return nil, BadRequest("Invalid input for query parameters %s. Value: %s. It must be a non-negative integer.", name, v)
			}
			n, err := IntParam(v, name)
			if err != nil {
				return nil, err
			}
			*p = n
		}
	}
	if limit == 0 || limit > MaxPage {
		limit = MaxPage
	}
	offset = min(offset, len(items))
	return items[offset:min(len(items), offset+limit)], nil
}
