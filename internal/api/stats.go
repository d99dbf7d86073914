package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/actorlet/actorlet/internal/stats"
)

// StatsBackend is a Backend that also serves resource use: the API then
// answers /stats/summary, /metrics/resource and /spec.
type StatsBackend interface {
	// StatsSummary answers the kubelet's Summary API; onlyCPUAndMemory
	// leaves filesystems out. ErrNotFound: no stats are collected.
	StatsSummary(ctx context.Context, onlyCPUAndMemory bool) (*statsapi.Summary, error)
	// MachineInfo is the machine's capacity.
	MachineInfo(ctx context.Context) (stats.MachineInfo, error)
}

// resourceScrapeTimeout bounds one /metrics/resource scrape's summary.
const resourceScrapeTimeout = 10 * time.Second

// statsRoutes mounts the stats endpoints when the backend serves them.
func (h *handler) statsRoutes(mux *http.ServeMux) {
	sb, ok := h.b.(StatsBackend)
	if !ok {
		return
	}
	mux.HandleFunc("GET /stats/summary", func(w http.ResponseWriter, r *http.Request) {
		only := false
		if v := r.URL.Query().Get("only_cpu_and_memory"); v != "" {
			var err error
			if only, err = strconv.ParseBool(v); err != nil {
				writeError(w, http.StatusBadRequest, "only_cpu_and_memory: "+strconv.Quote(v)+" is not a boolean")
				return
			}
		}
		s, err := sb.StatsSummary(r.Context(), only)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, s)
	})
	mux.HandleFunc("GET /spec", func(w http.ResponseWriter, r *http.Request) {
		m, err := sb.MachineInfo(r.Context())
		if err != nil {
			h.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, m)
	})
	reg := prometheus.NewRegistry()
	reg.MustRegister(stats.ResourceCollector(func(ctx context.Context) (*statsapi.Summary, error) {
		return sb.StatsSummary(ctx, true)
	}, resourceScrapeTimeout))
	mux.Handle("GET /metrics/resource", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
}
