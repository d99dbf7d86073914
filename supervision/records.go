package supervision

import (
	"cmp"
	"encoding/json"
	"slices"
)

// NamedRecord is the record of one container of a pod, by its name in the
// pod spec.
type NamedRecord struct {
	Name   string
	Record ContainerRecord
}

// Records is a pod's container records, at most one per container name,
// in no particular order. A pod has a few containers, so a slice is both
// smaller than a map (one ContainerRecord is ~370 B; a map of one holds it
// behind a pointer in a group of eight slots, ~640 B in all) and as fast
// to search. A Records shared with History or a Plan is read only: Set
// on a copy (Clone). Its JSON is an object by container name, as the
// state file has always held.
type Records []NamedRecord

// Get returns the record of the container name.
func (rs Records) Get(name string) (ContainerRecord, bool) {
	for i := range rs {
		if rs[i].Name == name {
			return rs[i].Record, true
		}
	}
	return ContainerRecord{}, false
}

// Set replaces or adds the record of the container name (in place: rs must
// not be shared).
func (rs Records) Set(name string, r ContainerRecord) Records {
	for i := range rs {
		if rs[i].Name == name {
			rs[i].Record = r
			return rs
		}
	}
	if len(rs) < cap(rs) {
		return append(rs, NamedRecord{Name: name, Record: r})
	}
	// Grow by exactly one: a record is ~390 B, and a pod has a few.
	out := make(Records, len(rs)+1)
	copy(out, rs)
	out[len(rs)] = NamedRecord{Name: name, Record: r}
	return out
}

// Clone returns a copy of exactly the same length and capacity (Set grows
// it by one when a record is added).
func (rs Records) Clone() Records {
	if rs == nil {
		return nil
	}
	out := make(Records, len(rs))
	copy(out, rs)
	return out
}

// Equal: both hold the same names with Equal records.
func (rs Records) Equal(o Records) bool {
	if len(rs) != len(o) {
		return false
	}
	for _, n := range rs {
		r, ok := o.Get(n.Name)
		if !ok || !n.Record.Equal(r) {
			return false
		}
	}
	return true
}

// Map returns the records by container name (a new map).
func (rs Records) Map() map[string]ContainerRecord {
	out := make(map[string]ContainerRecord, len(rs))
	for _, n := range rs {
		out[n.Name] = n.Record
	}
	return out
}

// RecordsOf returns the records of m, sorted by container name.
func RecordsOf(m map[string]ContainerRecord) Records {
	if m == nil {
		return nil
	}
	out := make(Records, 0, len(m))
	for name, r := range m {
		out = append(out, NamedRecord{Name: name, Record: r})
	}
	slices.SortFunc(out, func(a, b NamedRecord) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// MarshalJSON writes an object by container name.
func (rs Records) MarshalJSON() ([]byte, error) { return json.Marshal(rs.Map()) }

// UnmarshalJSON reads an object by container name.
func (rs *Records) UnmarshalJSON(b []byte) error {
	var m map[string]ContainerRecord
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*rs = RecordsOf(m)
	return nil
}
