package oracleplan

import "testing"

func TestToABI(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"actions":null,"requeueAfterSeconds":0,"events":null}`,
			`{"abi":1,"actions":[],"events":[],"requeueAfterSeconds":0}`},
		{`{"actions":[{"verb":"create","kind":"Pod","name":"web-0"}],"requeueAfterSeconds":2.5,"events":["Normal SuccessfulCreate create Pod web-0 in StatefulSet web successful","Warning X"],"error":""}`,
			`{"abi":1,"actions":[{"verb":"create","kind":"Pod","name":"web-0"}],"events":[{"message":"create Pod web-0 in StatefulSet web successful","reason":"SuccessfulCreate","type":"Normal"},{"message":"","reason":"X","type":"Warning"}],"requeueAfterSeconds":2.5}`},
		{`{"actions":[],"requeueAfterSeconds":0,"events":[],"error":"boom"}`,
			`{"abi":1,"actions":[],"error":{"code":"SyncFailed","message":"boom"},"events":[],"requeueAfterSeconds":0}`},
	} {
		got, err := ToABI([]byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("%s\n got  %s\n want %s", c.in, got, c.want)
		}
	}
	if _, err := ToABI([]byte(`[`)); err == nil {
		t.Error("bad JSON accepted")
	}
}
