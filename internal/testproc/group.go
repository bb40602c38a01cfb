package testproc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is Linux's USER_HZ, the unit of /proc/PID/stat's times.
const clockTick = 10 * time.Millisecond

// GroupStats lists /proc/PID/stat of every process in the process group
// pgid (Linux; none elsewhere), each split into its fields after the
// command name: field 0 is the state, 1 the parent, 2 the group.
func GroupStats(pgid int) map[int][]string {
	out := map[int][]string{}
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 13 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		if err == nil {
			out[pid] = f
		}
	}
	return out
}

// GroupCPU is the user and system CPU time the live processes of the
// process group pgid have used (Linux; zero elsewhere).
func GroupCPU(pgid int) time.Duration {
	var ticks int64
	for _, f := range GroupStats(pgid) {
		user, _ := strconv.ParseInt(f[11], 10, 64)
		sys, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += user + sys
	}
	return time.Duration(ticks) * clockTick
}
