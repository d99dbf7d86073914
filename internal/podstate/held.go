package podstate

import (
	"cmp"
	"math/bits"
	"slices"
	"time"

	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// held is one container of the listing a machine holds: the runtime's
// account of it without its label map (Labels is nil), and its labels
// packed. An idle pod holds its listing for as long as it lives; a label
// map costs about 600 B per container, the packed labels a third of that
// (their strings are shared with the listing's map, not copied).
type held struct {
	heldFields
	labels packedLabels
}

// heldFields is runtimeadapter.Container without its Labels field (never set
// in held): 240 B a held container, not 248, so that a pod's two fit the
// 480-B size class. The fields are Container's, by name and in order.
type heldFields struct {
	ID         string
	Name       string
	Image      string
	State      runtimeadapter.State
	RawState   string
	ExitCode   int
	Reason     string
	CreatedAt  time.Time
	StartedAt  time.Time
	FinishedAt time.Time
	IP         string
	Error      string
}

func heldFieldsOf(c *runtimeadapter.Container) heldFields {
	return heldFields{ID: c.ID, Name: c.Name, Image: c.Image, State: c.State, RawState: c.RawState, ExitCode: c.ExitCode,
		Reason: c.Reason, CreatedAt: c.CreatedAt, StartedAt: c.StartedAt, FinishedAt: c.FinishedAt, IP: c.IP, Error: c.Error}
}

// container is h as the runtime listed it, without labels.
func (h *held) container() runtimeadapter.Container {
	l := &h.heldFields
	return runtimeadapter.Container{ID: l.ID, Name: l.Name, Image: l.Image, State: l.State, RawState: l.RawState, ExitCode: l.ExitCode,
		Reason: l.Reason, CreatedAt: l.CreatedAt, StartedAt: l.StartedAt, FinishedAt: l.FinishedAt, IP: l.IP, Error: l.Error}
}

// knownLabels are the labels actorlet sets on its containers; a packed
// label set keeps their values without their keys. At most 16.
var knownLabels = [...]string{
	runtimeadapter.LabelNode, runtimeadapter.LabelPodUID, runtimeadapter.LabelPodName, runtimeadapter.LabelPodNamespace,
	runtimeadapter.LabelContainerName, runtimeadapter.LabelContainerType, runtimeadapter.LabelContainerHash,
	runtimeadapter.LabelRestartCount, runtimeadapter.LabelGracePeriod, runtimeadapter.LabelPodStartTime,
	podsync.LabelSandboxID, podsync.LabelStandby, podsync.LabelConfigHash, podsync.LabelSidecar,
}

// Indexes in knownLabels of the labels the machine reads itself.
const (
	knownContainerName = 4
	knownContainerType = 5
)

// packedLabels is a label map as a machine keeps it: mask says which of
// knownLabels are present, vals holds their values in knownLabels' order,
// then any other labels (an image's own) as key, value pairs. A listing's
// containers after the first leave out the known values they share with
// the first one (shared: the pod's node, UID, name, namespace... the
// same in each), read from it instead (base).
type packedLabels struct {
	mask   uint16
	shared uint16 // of mask: values that are base's, not in vals
	vals   []string
}

func knownIndex(k string) int {
	for i, l := range knownLabels {
		if l == k {
			return i
		}
	}
	return -1
}

// packLabels packs m (nil or empty: no allocation).
func packLabels(m map[string]string) packedLabels { return packLabelsOn(m, nil) }

// packLabelsOn packs m, leaving out the known values it shares with base
// (nil: none; base shares nothing itself).
func packLabelsOn(m map[string]string, base *packedLabels) packedLabels {
	var p packedLabels
	extra := 0
	for k, v := range m {
		if i := knownIndex(k); i >= 0 {
			p.mask |= 1 << i
			if base != nil && base.mask&(1<<i) != 0 && base.known(i) == v {
				p.shared |= 1 << i
			}
		} else {
			extra++
		}
	}
	own := p.mask &^ p.shared
	n := bits.OnesCount16(own) + 2*extra
	if n == 0 {
		return p
	}
	p.vals = make([]string, 0, n)
	for i, k := range knownLabels {
		if own&(1<<i) != 0 {
			p.vals = append(p.vals, m[k])
		}
	}
	if extra > 0 {
		start := len(p.vals)
		for k, v := range m {
			if knownIndex(k) < 0 {
				p.vals = append(p.vals, k, v)
			}
		}
		sortPairs(p.vals[start:])
	}
	return p
}

// sortPairs sorts key, value pairs by key (a packed set is the same
// whatever order its map was read in).
func sortPairs(kv []string) {
	type pair struct{ k, v string }
	ps := make([]pair, len(kv)/2)
	for i := range ps {
		ps[i] = pair{kv[2*i], kv[2*i+1]}
	}
	slices.SortFunc(ps, func(a, b pair) int { return cmp.Compare(a.k, b.k) })
	for i, p := range ps {
		kv[2*i], kv[2*i+1] = p.k, p.v
	}
}

// known returns the value of knownLabels[i] ("" when absent) of a set
// packed without a base.
func (p *packedLabels) known(i int) string { return p.knownOn(i, nil) }

// knownOn returns the value of knownLabels[i] ("" when absent) of a set
// packed on base.
func (p *packedLabels) knownOn(i int, base *packedLabels) string {
	bit := uint16(1) << i
	switch {
	case p.mask&bit == 0:
		return ""
	case p.shared&bit != 0:
		if base == nil {
			return ""
		}
		return base.known(i)
	}
	own := p.mask &^ p.shared
	return p.vals[bits.OnesCount16(own&(bit-1))]
}

// unpack returns the label map p was packed from (nil when it was empty),
// packed without a base.
func (p *packedLabels) unpack() map[string]string { return p.unpackOn(nil) }

// unpackOn returns the label map p was packed on base from.
func (p *packedLabels) unpackOn(base *packedLabels) map[string]string {
	own := p.mask &^ p.shared
	nk := bits.OnesCount16(own)
	ns := bits.OnesCount16(p.shared)
	if nk+ns+len(p.vals) == 0 {
		return nil
	}
	m := make(map[string]string, nk+ns+(len(p.vals)-nk)/2)
	j := 0
	for i, k := range knownLabels {
		switch {
		case own&(1<<i) != 0:
			m[k] = p.vals[j]
			j++
		case p.shared&(1<<i) != 0 && base != nil:
			m[k] = base.known(i)
		}
	}
	for ; j+1 < len(p.vals); j += 2 {
		m[p.vals[j]] = p.vals[j+1]
	}
	return m
}

// base is the packed labels the containers of hs after the first are
// packed on (nil for the first).
func base(hs []held, i int) *packedLabels {
	if i == 0 {
		return nil
	}
	return &hs[0].labels
}

// hold packs a listing.
func hold(cs []runtimeadapter.Container) []held {
	if len(cs) == 0 {
		return nil
	}
	hs := make([]held, len(cs))
	for i := range cs {
		hs[i].heldFields = heldFieldsOf(&cs[i])
		hs[i].labels = packLabelsOn(cs[i].Labels, base(hs, i))
	}
	return hs
}

// unhold returns the listing hs holds, with label maps made anew (a
// sync's plan and status read them; they are garbage after it).
func unhold(hs []held) []runtimeadapter.Container {
	if len(hs) == 0 {
		return nil
	}
	cs := make([]runtimeadapter.Container, len(hs))
	for i := range hs {
		cs[i] = hs[i].container()
		cs[i].Labels = hs[i].labels.unpackOn(base(hs, i))
	}
	return cs
}
