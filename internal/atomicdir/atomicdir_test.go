package atomicdir

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 20, 55, 0, 0, time.UTC)

func TestCheckPath(t *testing.T) {
	tests := []struct {
		p       string
		wantErr string
	}{
		{p: "labels"},
		{p: "a/b/c"},
		{p: "a..b"},
		{p: "", wantErr: "path is empty"},
		{p: "/etc/passwd", wantErr: "must be relative"},
		{p: "..data", wantErr: "must not start with '..'"},
		{p: "a/../b", wantErr: "must not contain '..'"},
		{p: strings.Repeat("x", 4097), wantErr: "longer than 4096 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.p, func(t *testing.T) {
			err := CheckPath(tt.p)
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("CheckPath(%q) = %v, want %q", tt.p, err, tt.wantErr)
			}
		})
	}
}

// tree lists dir's entries (recursively, not through links): files as
// "name mode data", links as "name -> target", directories with "/", the
// timestamped directory's name replaced by "..TS".
func tree(t *testing.T, dir string) []string {
	t.Helper()
	ts, _ := os.Readlink(filepath.Join(dir, DataDir))
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if ts != "" {
			rel = strings.Replace(rel, ts, "..TS", 1)
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			if target == ts {
				target = "..TS"
			}
			out = append(out, rel+" -> "+target)
		case d.IsDir():
			out = append(out, rel+"/")
		default:
			info, _ := d.Info()
			data, _ := os.ReadFile(p)
			out = append(out, rel+" "+info.Mode().Perm().String()+" "+string(data))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func TestWrite(t *testing.T) {
	tests := []struct {
		name        string
		first, next map[string]File // next nil: only first is written
		wantChanged bool            // of the last write
		want        []string
		wantErr     string
	}{
		{name: "first write", first: map[string]File{"labels": {Data: []byte(`app="web"`)}, "cpu": {Data: []byte("2"), Mode: 0o400}},
			wantChanged: true, want: []string{
				"..TS/", "..TS/cpu -r-------- 2", `..TS/labels -rw-r--r-- app="web"`,
				"..data -> ..TS", "cpu -> ..data/cpu", "labels -> ..data/labels",
			}},
		{name: "nested paths link their top directory", first: map[string]File{"a/b": {Data: []byte("1")}, "a/c/d": {Data: []byte("2")}},
			wantChanged: true, want: []string{
				"..TS/", "..TS/a/", "..TS/a/b -rw-r--r-- 1", "..TS/a/c/", "..TS/a/c/d -rw-r--r-- 2",
				"..data -> ..TS", "a -> ..data/a",
			}},
		{name: "unchanged set is left alone", first: map[string]File{"x": {Data: []byte("1")}}, next: map[string]File{"x": {Data: []byte("1")}},
			wantChanged: false, want: []string{"..TS/", "..TS/x -rw-r--r-- 1", "..data -> ..TS", "x -> ..data/x"}},
		{name: "a mode change is a change", first: map[string]File{"x": {Data: []byte("1")}}, next: map[string]File{"x": {Data: []byte("1"), Mode: 0o600}},
			wantChanged: true, want: []string{"..TS/", "..TS/x -rw------- 1", "..data -> ..TS", "x -> ..data/x"}},
		{name: "update drops gone names and the old set", first: map[string]File{"x": {Data: []byte("1")}, "y": {Data: []byte("2")}},
			next:        map[string]File{"x": {Data: []byte("3")}, "z": {Data: []byte("4")}},
			wantChanged: true, want: []string{
				"..TS/", "..TS/x -rw-r--r-- 3", "..TS/z -rw-r--r-- 4", "..data -> ..TS", "x -> ..data/x", "z -> ..data/z",
			}},
		{name: "empty set", first: map[string]File{"x": {Data: []byte("1")}}, next: map[string]File{},
			wantChanged: true, want: []string{"..TS/", "..data -> ..TS"}},
		{name: "bad path writes nothing", first: map[string]File{"ok": {}, "../escape": {}}, wantErr: "must not start with '..'"},
		{name: "a file and a directory of one name", first: map[string]File{"a": {}, "a/b": {}}, wantErr: `path "a" is also a file of the set`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			changed, err := Write(dir, tt.first, t0)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Write = %v, want an error containing %q", err, tt.wantErr)
				}
				if got := tree(t, dir); len(got) != 0 {
					t.Fatalf("a refused write left %q", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.next != nil {
				if changed, err = Write(dir, tt.next, t0.Add(time.Second)); err != nil {
					t.Fatal(err)
				}
			}
			if changed != tt.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tt.wantChanged)
			}
			if got := tree(t, dir); !slices.Equal(got, tt.want) {
				t.Errorf("dir holds\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestWriteNamesSetByTime(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(dir, map[string]File{"x": {}}, t0); err != nil {
		t.Fatal(err)
	}
	ts, err := os.Readlink(filepath.Join(dir, DataDir))
	if err != nil || !strings.HasPrefix(ts, "..2026_12_01_20_55_00.") {
		t.Fatalf("%s -> %q, %v; want a ..2026_12_01_20_55_00.* directory", DataDir, ts, err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "x"))
	if err != nil || len(data) != 0 {
		t.Fatalf("reading through the links: %q, %v", data, err)
	}
}
