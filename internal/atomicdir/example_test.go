package atomicdir_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/actorlet/actorlet/internal/atomicdir"
)

func ExampleWrite() {
	dir, err := os.MkdirTemp("", "atomicdir")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	now := time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC)
	if _, err := atomicdir.Write(dir, map[string]atomicdir.File{"labels": {Data: []byte(`app="web"`)}}, now); err != nil {
		panic(err)
	}
	changed, _ := atomicdir.Write(dir, map[string]atomicdir.File{"labels": {Data: []byte(`app="db"`)}}, now.Add(time.Minute))
	link, _ := os.Readlink(filepath.Join(dir, "labels"))
	data, _ := os.ReadFile(filepath.Join(dir, "labels"))
	fmt.Println(changed, link, string(data))
	// Output: true ..data/labels app="db"
}
