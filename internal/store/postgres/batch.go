package postgres

import "github.com/ingot-dev/ingot/internal/store"

// The batch saver and the changed-records lister are the shared ones
// (sqlstore), over this store's Save and CheckFence.
var (
	_ store.BatchSaver = (*Store)(nil)
	_ store.WorkLister = (*Store)(nil)
)
