package url

import (
	neturl "net/url"
	"strings"
)

// redactedValue replaces the value of a query parameter that looks secret.
const redactedValue = "REDACTED"

// secretParamWords mark a query parameter whose value is redacted when the
// parameter's name contains one of them, in any case (e.g. token,
// access_token, X-Amz-Signature, sig, api_key, password).
var secretParamWords = []string{"token", "secret", "passw", "key", "auth", "sig", "credential", "session"}

// redact returns u as shown in the source's name, logs, errors and
// annotations: without userinfo and fragment, and with the value of every
// query parameter that looks secret (see secretParamWords) replaced by
// REDACTED. The other parameters keep their order and spelling.
func redact(u *neturl.URL) string {
	c := *u
	c.User = nil
	c.Fragment, c.RawFragment = "", ""
	if c.RawQuery != "" {
		params := strings.Split(c.RawQuery, "&")
		for i, p := range params {
			rawKey, _, hasValue := strings.Cut(p, "=")
			key, err := neturl.QueryUnescape(rawKey)
			if err != nil {
				key = rawKey
			}
			if hasValue && isSecretParam(key) {
				params[i] = rawKey + "=" + redactedValue
			}
		}
		c.RawQuery = strings.Join(params, "&")
	}
	return c.String()
}

func isSecretParam(name string) bool {
	name = strings.ToLower(name)
	for _, w := range secretParamWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}
