package manifest

import (
	"fmt"
	"regexp"
	"slices"

	v1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Kinds of the documents a manifest file may hold besides pods: objects
// a pod of their namespace may use (volumes, env), read, checked and
// handed to the node.
const (
	ConfigMapKind = "ConfigMap"
	SecretKind    = "Secret"
)

// documentKinds are the kinds DecodeDocuments reads.
var documentKinds = []string{PodKind, ConfigMapKind, SecretKind}

// decodeConfigMap decodes a ConfigMap's fields (see decodeObject).
func decodeConfigMap(jsonData []byte, opts DecodeOptions) (*v1.ConfigMap, []string, error) {
	cm := &v1.ConfigMap{}
	warnings, err := decodeInto(jsonData, cm, opts)
	if err != nil {
		return nil, nil, err
	}
	return cm, warnings, nil
}

// decodeSecret decodes a Secret's fields (see decodeObject). Its errors
// never show a value of data or stringData.
func decodeSecret(jsonData []byte, opts DecodeOptions) (*v1.Secret, []string, error) {
	s := &v1.Secret{}
	warnings, err := decodeInto(jsonData, s, opts)
	if err != nil {
		return nil, nil, redactValues(err)
	}
	return s, warnings, nil
}

// redactValues hides the value of every *ValueError in err.
func redactValues(err error) error {
	for _, e := range flatten(err) {
		if ve, ok := e.(*ValueError); ok {
			ve.Value = "(hidden: a Secret's value)"
		}
	}
	return err
}

// flatten returns err and every error it wraps, depth first.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	out := []error{err}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		out = append(out, flatten(u.Unwrap())...)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = append(out, flatten(e)...)
		}
	}
	return out
}

// SetConfigMapDefaults makes an empty namespace "default".
func SetConfigMapDefaults(cm *v1.ConfigMap) {
	if cm.Namespace == "" {
		cm.Namespace = DefaultNamespace
	}
}

// SetSecretDefaults makes an empty namespace "default" and an empty type
// Opaque, and merges stringData into data as the API server does (a key
// in both takes stringData's value), leaving stringData empty.
func SetSecretDefaults(s *v1.Secret) {
	if s.Namespace == "" {
		s.Namespace = DefaultNamespace
	}
	if s.Type == "" {
		s.Type = v1.SecretTypeOpaque
	}
	if len(s.StringData) > 0 {
		if s.Data == nil {
			s.Data = make(map[string][]byte, len(s.StringData))
		}
		for k, v := range s.StringData {
			s.Data[k] = []byte(v)
		}
		s.StringData = nil
	}
}

// maxConfigDataBytes bounds the data of one ConfigMap or Secret, as the
// API server does.
const maxConfigDataBytes = 1 << 20

// ValidateConfigMap checks a defaulted ConfigMap: its name and namespace,
// labels and annotations, and its keys (valid, not in both data and
// binaryData), at most 1 MiB of data in all.
func ValidateConfigMap(cm *v1.ConfigMap) error {
	errs := validateConfigMeta(cm.Name, cm.Namespace, cm.Labels, cm.Annotations)
	size := 0
	for _, k := range sortedKeys(cm.Data) {
		errs = append(errs, validateConfigKey(field.NewPath("data").Key(k), k)...)
		size += len(cm.Data[k])
	}
	for _, k := range sortedKeys(cm.BinaryData) {
		p := field.NewPath("binaryData").Key(k)
		errs = append(errs, validateConfigKey(p, k)...)
		if _, dup := cm.Data[k]; dup {
			errs = append(errs, field.Invalid(p, k, "duplicate of key in data"))
		}
		size += len(cm.BinaryData[k])
	}
	if size > maxConfigDataBytes {
		errs = append(errs, field.TooLong(field.NewPath("data"), "", maxConfigDataBytes))
	}
	return aggregateFields(errs)
}

// ValidateSecret checks a defaulted Secret: its name and namespace,
// labels and annotations, its keys, at most 1 MiB of data in all, and
// the keys its type requires (tls.crt and tls.key for kubernetes.io/tls,
// .dockerconfigjson for kubernetes.io/dockerconfigjson …). No message
// shows a value.
func ValidateSecret(s *v1.Secret) error {
	errs := validateConfigMeta(s.Name, s.Namespace, s.Labels, s.Annotations)
	size := 0
	for _, k := range sortedKeys(s.Data) {
		errs = append(errs, validateConfigKey(field.NewPath("data").Key(k), k)...)
		size += len(s.Data[k])
	}
	if size > maxConfigDataBytes {
		errs = append(errs, field.TooLong(field.NewPath("data"), "", maxConfigDataBytes))
	}
	for _, k := range secretTypeKeys[s.Type] {
		if _, ok := s.Data[k]; !ok {
			errs = append(errs, field.Required(field.NewPath("data").Key(k), fmt.Sprintf("a Secret of type %s needs it", s.Type)))
		}
	}
	return aggregateFields(errs)
}

// secretTypeKeys are the keys a Secret of a built-in type must hold.
var secretTypeKeys = map[v1.SecretType][]string{
	v1.SecretTypeTLS:              {v1.TLSCertKey, v1.TLSPrivateKeyKey},
	v1.SecretTypeDockerConfigJson: {v1.DockerConfigJsonKey},
	v1.SecretTypeDockercfg:        {v1.DockerConfigKey},
	v1.SecretTypeSSHAuth:          {v1.SSHAuthPrivateKey},
}

func validateConfigMeta(name, namespace string, labels, annotations map[string]string) field.ErrorList {
	meta := field.NewPath("metadata")
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(meta.Child("name"), ""))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(name) {
			errs = append(errs, field.Invalid(meta.Child("name"), name, msg))
		}
	}
	for _, msg := range validation.IsDNS1123Label(namespace) {
		errs = append(errs, field.Invalid(meta.Child("namespace"), namespace, msg))
	}
	errs = append(errs, metavalidation.ValidateLabels(labels, meta.Child("labels"))...)
	errs = append(errs, apivalidation.ValidateAnnotations(annotations, meta.Child("annotations"))...)
	return errs
}

func validateConfigKey(p *field.Path, k string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsConfigMapKey(k) {
		errs = append(errs, field.Invalid(p, k, msg))
	}
	return errs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// secretTextRE recognises a YAML document that declares itself a Secret,
// before it parses.
var secretTextRE = regexp.MustCompile(`(?m)^kind:\s*["']?Secret["']?\s*(#.*)?$`)

// quotedRE matches what a YAML parser's message quotes of the input.
var quotedRE = regexp.MustCompile("`[^`]*`|\"(?:[^\"\\\\]|\\\\.)*\"|'[^']*'")

// hideQuoted removes from a syntax error about a document that looks
// like a Secret everything the parser quoted of it.
func hideQuoted(err error) error {
	var se *SyntaxError
	for _, e := range flatten(err) {
		if s, ok := e.(*SyntaxError); ok {
			se = s
			break
		}
	}
	if se == nil {
		return err
	}
	c := *se
	c.Err = fmt.Errorf("%s", quotedRE.ReplaceAllString(se.Err.Error(), "(hidden: in a Secret)"))
	return &c
}
