package cri

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

func TestParseLogLine(t *testing.T) {
	for _, tc := range []struct {
		line    string
		stream  string
		partial bool
		content string
		bad     bool
	}{
		{line: "2016-10-06T00:17:09.669794202Z stdout F hello world", stream: "stdout", content: "hello world"},
		{line: "2016-10-06T00:17:09.669794202Z stderr P part", stream: "stderr", partial: true, content: "part"},
		{line: "2016-10-06T00:17:09.669794202Z stdout F ", stream: "stdout", content: ""},
		{line: "2016-10-06T00:17:09.669794202Z stdout F", stream: "stdout", content: ""},
		{line: "2016-10-06T00:17:09.669794202+02:00 stdout F  two  spaces ", stream: "stdout", content: " two  spaces "},
		{line: "2016-10-06T00:17:09Z stdout old format", stream: "stdout", content: "old format"},
		{line: "not a log line", bad: true},
		{line: "2016-10-06T00:17:09Z stdin F x", bad: true},
		{line: "", bad: true},
	} {
		e, err := parseLogLine([]byte(tc.line))
		if tc.bad {
			if err == nil {
				t.Errorf("%q: parsed, want an error", tc.line)
			}
			continue
		}
		if err != nil || e.stream != tc.stream || e.partial != tc.partial || string(e.content) != tc.content {
			t.Errorf("%q: %+v, %v; want %s %v %q", tc.line, e, err, tc.stream, tc.partial, tc.content)
		}
	}
}

func TestReadSelectRender(t *testing.T) {
	log := strings.Join([]string{
		"2024-01-01T00:00:01Z stdout F one",
		"2024-01-01T00:00:02Z stdout P tw",
		"2024-01-01T00:00:02.5Z stderr F err",
		"2024-01-01T00:00:03Z stdout F o",
		"garbage",
		"2024-01-01T00:00:04Z stdout F four",
		"2024-01-01T00:00:05Z stdout F unfinished", // no newline yet
	}, "\n")
	var j joiner
	lines, n, err := readLines(strings.NewReader(log), &j)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines {
		got = append(got, string(l.content))
	}
	if strings.Join(got, "|") != "one|err|two|four" {
		t.Errorf("lines %q: partial entries joined per stream, garbage skipped, the unfinished line left", got)
	}
	if want := int64(strings.LastIndex(log, "\n") + 1); n != want {
		t.Errorf("read %d bytes, want %d (up to the last newline)", n, want)
	}
	// "two" is dated by its first part.
	if !lines[2].time.Equal(time.Date(2024, 1, 1, 0, 0, 2, 0, time.UTC)) {
		t.Errorf("joined line's time %v", lines[2].time)
	}
	sel := selectLines(lines, runtimeadapter.LogOptions{TailLines: 2})
	if len(sel) != 2 || string(sel[0].content) != "two" {
		t.Errorf("tail 2: %+v", sel)
	}
	sel = selectLines(lines, runtimeadapter.LogOptions{Since: time.Date(2024, 1, 1, 0, 0, 2, 0, time.UTC)})
	if len(sel) != 3 || string(sel[0].content) != "err" {
		t.Errorf("since 00:00:02: %+v", sel)
	}
	var b bytes.Buffer
	render(&b, lines[0], true)
	render(&b, lines[3], false)
	if want := "2024-01-01T00:00:01.000000000Z one\nfour\n"; b.String() != want {
		t.Errorf("render = %q, want %q", b.String(), want)
	}
}

func TestToPrune(t *testing.T) {
	p := "/l/app/0.log"
	files := []string{p + ".20240101-000003", p + ".20240101-000001.gz", p + ".20240101-000002", p + ".tmp", p + ".2024", "/l/app/1.log.20240101-000000"}
	got := toPrune(p, files, 2)
	if len(got) != 1 || got[0] != p+".20240101-000001.gz" {
		t.Errorf("toPrune keep 2 = %v, want the oldest rotated file only (not .tmp, not another log's)", got)
	}
	if got := toPrune(p, files, 3); len(got) != 0 {
		t.Errorf("toPrune keep 3 = %v, want none", got)
	}
	if got := toPrune(p, files, 0); len(got) != 3 {
		t.Errorf("toPrune keep 0 = %v, want the 3 rotated files", got)
	}
}
