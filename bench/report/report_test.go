package report

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	xs := []time.Duration{5, 1, 4, 2, 3}
	for p, want := range map[float64]time.Duration{0: 1, 50: 3, 80: 4, 99: 5, 100: 5} {
		if got := Percentile(xs, p); got != want {
			t.Errorf("Percentile(%v) = %v, want %v", p, got, want)
		}
	}
	if Percentile(nil, 50) != -1 {
		t.Error("no samples: want -1")
	}
}

func TestTableAndCDF(t *testing.T) {
	var b bytes.Buffer
	tb := &Table{Title: "T", Header: []string{"a", "b"}}
	tb.Add("x", 1)
	tb.Write(&b)
	if !strings.Contains(b.String(), "| x |") || !strings.Contains(b.String(), "### T") {
		t.Errorf("table:\n%s", b.String())
	}
	b.Reset()
	err := CDF(&b, "t", []Series{{Name: "a", Samples: []time.Duration{time.Millisecond, 2 * time.Millisecond}},
		{Name: "b", Samples: []time.Duration{time.Second}}})
	if err != nil || !strings.HasPrefix(b.String(), "<svg") || strings.Count(b.String(), "<polyline") != 2 {
		t.Errorf("CDF: %v\n%s", err, b.String())
	}
	if CDF(&b, "t", nil) == nil {
		t.Error("CDF without samples: want an error")
	}
}
