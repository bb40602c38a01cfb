//go:build crashpoints

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// crashStep is compiled only into test builds (go build -tags crashpoints):
// the kill -9 suite (test/crash) uses it to die at an exact step boundary
// of the reconciler.
//
//	INGOT_CRASH_AT=<point>[:<nth>]  SIGKILL this process at the nth time
//	                                (default 1) the reconciler reaches point,
//	                                e.g. "after:reserve" or "saved:deploying"
//	                                ("adopt:saved": after each instance
//	                                `ingot adopt` committed)
//	INGOT_CRASH_LOG=<file>          append every point reached to file, one a
//	                                line (to learn a build's sequence of points)
//
// An interface attach reaches before:attach_interface, then (Neutron)
// after:neutron-create-port — between Neutron's create and ingot's record —
// and after:interface-bound, before Ironic's VIF attach; a detach
// before:detach_interface and after:detach_interface.
//
// The kill happens inside the step hook, so nothing after the point — no
// database write, no Ironic call — takes place, exactly as with kill -9.
func crashStep() func(point string) {
	at, logPath := os.Getenv("INGOT_CRASH_AT"), os.Getenv("INGOT_CRASH_LOG")
	if at == "" && logPath == "" {
		return nil
	}
	// Points contain a colon themselves ("after:reserve"): nth is what
	// follows the last colon, when that is a number.
	point, nth := at, 1
	if i := strings.LastIndex(at, ":"); i >= 0 {
		if v, err := strconv.Atoi(at[i+1:]); err == nil {
			if v < 1 {
				fmt.Fprintf(os.Stderr, "INGOT_CRASH_AT=%q: nth must be >= 1\n", at)
				os.Exit(2)
			}
			point, nth = at[:i], v
		}
	}
	var (
		mu   sync.Mutex
		seen int
		logf *os.File
	)
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintf(os.Stderr, "INGOT_CRASH_LOG: %v\n", err)
			os.Exit(2)
		}
		logf = f
	}
	return func(p string) {
		mu.Lock()
		defer mu.Unlock()
		if logf != nil {
			// Unbuffered: the line is in the file even if we die next.
			_, _ = logf.WriteString(p + "\n")
		}
		if p != point {
			return
		}
		seen++
		if seen != nth {
			return
		}
		fmt.Fprintf(os.Stderr, "crashpoint %s:%d reached: SIGKILL\n", point, nth)
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // never return into the reconciler
	}
}
