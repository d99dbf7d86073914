package manifest

import (
	"errors"
	"fmt"
)

// ErrEmpty is returned (wrapped in a *FileError) by Decode and LoadFile when
// a manifest holds no document: it is empty, blank, or only comments.
var ErrEmpty = errors.New("empty manifest: want one Pod")

// FileError is an error about one manifest file. Its message is
// "manifest <path>: <cause>", e.g.
//
//	manifest /etc/actorlet/manifests/web.yaml: spec.containers[0].image: Required value
//
// Decode and LoadFile return every error as a *FileError; use errors.As to
// get the path and errors.Is / errors.As on the cause.
type FileError struct {
	Path string // as given to Decode; absolute when it comes from LoadFile
	Err  error
}

func (e *FileError) Error() string { return fmt.Sprintf("manifest %s: %v", e.Path, e.Err) }

// Unwrap returns the cause.
func (e *FileError) Unwrap() error { return e.Err }
