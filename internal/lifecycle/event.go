package lifecycle

import "time"

// Action names the user request an event belongs to, as in Nova's instance actions.
const (
	ActionCreate = "create"
	ActionDelete = "delete"
)

// Event results, as Nova spells them.
const (
	ResultSuccess = "Success"
	ResultError   = "Error"
)

// Event is one step of a server's story; events feed os-instance-actions.
// Every recorded transition carries at least one.
type Event struct {
	ServerID  string
	RequestID string // the create or delete request it belongs to
	Action    string // ActionCreate or ActionDelete
	Name      string // e.g. "reserve_node", "deploy", "release"
	Node      string
	Result    string // ResultSuccess, ResultError, or "" while in progress
	Details   string
	Start     time.Time
	Finish    time.Time
}
