package jsonobj

import (
	"encoding/json"
	"testing"
)

func TestPaths(t *testing.T) {
	o, err := DecodeObj([]byte(`{"spec":{"containers":[{"name":"a","image":"x"},{"name":"b"}],"replicas":3}}`))
	if err != nil {
		t.Fatal(err)
	}
	if GetStr(o, "spec.containers[0].image") != "x" || GetStr(o, "spec.containers[1].image") != "" || Get(o, "spec.containers[2]") != nil {
		t.Fatal("Get through lists")
	}
	if n, ok := GetInt(o, "spec.replicas"); !ok || n != 3 {
		t.Fatalf("GetInt %d %v", n, ok)
	}
	if _, ok := GetInt(o, "spec.containers[0].name"); ok {
		t.Fatal("GetInt of a string")
	}
	if err := Set(o, "spec.containers[1].image", "y"); err != nil || GetStr(o, "spec.containers[1].image") != "y" {
		t.Fatalf("Set in a list: %v", err)
	}
	if err := Set(o, "spec.template.metadata.labels.app", "web"); err != nil || GetStr(o, "spec.template.metadata.labels.app") != "web" {
		t.Fatalf("Set creates objects: %v", err)
	}
	for _, bad := range []string{"spec.containers[5].image", "spec.volumes[0].name", "spec.replicas.x"} {
		if err := Set(o, bad, 1); err == nil {
			t.Errorf("Set %s: no error", bad)
		}
	}
	Delete(o, "spec.containers[0].image")
	if Get(o, "spec.containers[0].image") != nil || GetStr(o, "spec.containers[0].name") != "a" {
		t.Fatal("Delete")
	}
	if _, err := Decode([]byte(`{} {}`)); err == nil {
		t.Fatal("trailing data accepted")
	}
}

func TestCloneAndEqual(t *testing.T) {
	o, _ := DecodeObj([]byte(`{"a":[1,{"b":2.0}],"c":null}`))
	c := CloneObj(o)
	Ensure(c, "d")["e"] = "f"
	AsObj(AsArr(c["a"])[1])["b"] = json.Number("3")
	if Get(o, "d") != nil || Get(o, "a[1].b") != json.Number("2.0") {
		t.Fatal("Clone shares structure")
	}
	if !Equal(o, Obj{"a": []any{1, Obj{"b": 2}}, "c": nil}) {
		t.Fatal("Equal compares numbers numerically")
	}
	if Equal(o, Obj{"a": []any{1, Obj{"b": 2}}}) || Equal(Obj{"a": []any{}}, Obj{"a": nil}) {
		t.Fatal("Equal ignores a missing key or null vs []")
	}
	if !Equal(json.RawMessage(`{"x": 1}`), Obj{"x": 1.0}) {
		t.Fatal("Equal decodes raw JSON")
	}
}
