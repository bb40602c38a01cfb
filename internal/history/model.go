package history

import (
	"math"
	"time"

	"github.com/anishathalye/porcupine"
)

// A server's existence, as a register the API reads and writes: absent
// (before its create), live, deleting (a delete accepted), gone (404).
// The step from deleting to gone is ingot's own, taken at the first
// observation that shows it gone.
type existence uint8

const (
	absent existence = iota
	live
	deleting
	gone
)

// input is one operation on one server's existence.
type input uint8

const (
	inCreate         input = iota // 202
	inCreateMaybe                 // no answer or 5xx: may or may not have made it
	inDelete                      // 204
	inDeleteMaybe                 // no answer or 5xx
	inDeleteNotFound              // 404
	inSeenLive                    // shown or listed, no delete shown
	inSeenDeleting                // shown or listed with task_state deleting
	inSeenGone                    // 404 on a show, DELETED, or absent at the end
)

var inputNames = [...]string{"create", "create?", "delete", "delete?", "delete→404", "seen live", "seen deleting", "seen gone"}

// step is the sequential specification: the states an operation may
// leave, none when it cannot happen in s.
func step(s existence, in input) []existence {
	switch in {
	case inCreate:
		return when(s == absent, live)
	case inCreateMaybe:
		if s == absent {
			return []existence{absent, live}
		}
		return []existence{s} // a second create of the name made another server
	case inDelete:
		return when(s == live || s == deleting, deleting)
	case inDeleteMaybe:
		if s == live {
			return []existence{live, deleting}
		}
		return when(s != absent, s)
	case inDeleteNotFound:
		return when(s == deleting || s == gone, gone)
	case inSeenLive:
		return when(s == live, live)
	case inSeenDeleting:
		return when(s == deleting, deleting)
	case inSeenGone:
		return when(s == deleting || s == gone, gone)
	}
	return nil
}

func when(ok bool, s existence) []existence {
	if ok {
		return []existence{s}
	}
	return nil
}

var existenceModel = (&porcupine.NondeterministicModel{
	Init: func() []interface{} { return []interface{}{absent} },
	Step: func(state, in, _ interface{}) []interface{} {
		var out []interface{}
		for _, s := range step(state.(existence), in.(input)) {
			out = append(out, s)
		}
		return out
	},
	DescribeOperation: func(in, _ interface{}) string { return inputNames[in.(input)] },
	DescribeState: func(s interface{}) string {
		return [...]string{"absent", "live", "deleting", "gone"}[s.(existence)]
	},
}).ToModel()

// porcupineOp is an operation on the checker's time line (nanoseconds
// since origin); an ambiguous one may take effect at any instant after its
// call.
func porcupineOp(in input, call, ret, origin time.Time, ambiguous bool) porcupine.Operation {
	r := ret.Sub(origin).Nanoseconds()
	if ambiguous {
		r = math.MaxInt64
	}
	return porcupine.Operation{Input: in, Call: call.Sub(origin).Nanoseconds(), Return: r}
}

// linearizable checks one server's existence: Ok, Illegal, or Unknown
// when the search ran out of time.
func linearizable(ops []porcupine.Operation, timeout time.Duration) porcupine.CheckResult {
	return porcupine.CheckOperationsTimeout(existenceModel, ops, timeout)
}
