package statsbench

import (
	"os"
	"testing"
)

// A small run: both endpoints answer, the summary holds every pod.
func TestRunSmall(t *testing.T) {
	res, tb, err := Run(Options{Pods: 5, Requests: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Bytes < 5*500 || res[0].P50 <= 0 || res[1].Bytes == 0 {
		t.Fatalf("results %+v", res)
	}
	if testing.Verbose() {
		tb.Write(os.Stdout)
	}
}
