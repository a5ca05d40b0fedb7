package snapshot

import "k8s.io/apimachinery/pkg/api/meta"

// TrimManagedFields is kube-controller-manager's informer transform (cmd/kube-controller-manager/app),
// which drops managedFields to save memory, except that it keeps who wrote what when (each entry's
// manager, operation, subresource and time, without its field set, the bulk): the controller's
// otherController reads them. Snapshots carry none (Build).
func TrimManagedFields(obj any) (any, error) {
	if accessor, err := meta.Accessor(obj); err == nil && accessor.GetManagedFields() != nil {
		mf := accessor.GetManagedFields()
		for i := range mf {
			mf[i].FieldsV1 = nil
		}
		accessor.SetManagedFields(mf)
	}
	return obj, nil
}
