package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// fileMode is the mode of the database and its -wal and -shm files: they
// hold user_data and config drives, so only the owner may read them.
const fileMode fs.FileMode = 0o600

// ownerOnly makes the database file exist with mode 0600 before SQLite opens
// it, and narrows an existing database, -wal or -shm to 0600. NOTE: SQLite
// (and modernc's port of its unix VFS) creates a new database with 0644
// minus the umask, but creates -wal, -journal and -shm with the mode of the
// database file, so a 0600 database is enough for the files created later.
func ownerOnly(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, fileMode)
	if err != nil {
		return fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("sqlite: %w", err)
		}
		if fi.Mode().Perm()&^fileMode != 0 {
			if err := os.Chmod(p, fileMode); err != nil {
				return fmt.Errorf("sqlite: restrict %s to the owner: %w", p, err)
			}
		}
	}
	return nil
}
