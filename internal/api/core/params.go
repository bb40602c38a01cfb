package core

import (
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
