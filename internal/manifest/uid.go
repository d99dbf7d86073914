package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// uidHexLen is the length of a generated UID: 32 hex digits (128 bits).
const uidHexLen = 32

// StaticPodUID returns the identity of a pod read from a file: its
// metadata.uid when the manifest sets one, else 32 hex digits of the
// SHA-256 of nodeName, absPath and the pod in canonical form (the JSON of a
// defaulted copy with no UID). pod is not modified.
//
// The UID therefore survives edits that do not change the pod (comments,
// whitespace, key order, YAML vs JSON, spelling out a default), and changes
// with any real edit, with the file's path, and from node to node. Call it
// before adding LoadFile's annotations (LoadFile does).
func StaticPodUID(nodeName, absPath string, pod *v1.Pod) types.UID {
	if pod.UID != "" {
		return pod.UID
	}
	canon := pod.DeepCopy()
	SetDefaults(canon)
	canon.UID = ""
	data, err := json.Marshal(canon)
	if err != nil {
		// A v1.Pod always marshals; keep the UID stable per file anyway.
		data = nil
	}
	h := sha256.New()
	for _, part := range [][]byte{[]byte(nodeName), []byte(absPath), data} {
		h.Write(part)
		h.Write([]byte{0}) // separator: ("ab","c") and ("a","bc") differ
	}
	return types.UID(hex.EncodeToString(h.Sum(nil))[:uidHexLen])
}
