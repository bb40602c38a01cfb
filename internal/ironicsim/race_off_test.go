//go:build !race

package ironicsim

const raceEnabled = false
