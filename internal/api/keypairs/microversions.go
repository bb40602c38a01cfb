package keypairs

// The microversions (2.N) that change what this package accepts or answers,
// named after what they bring.
const (
	mvKeypairType       = 2  // 2.2: the keypair type; 201 on create, 204 on delete
	mvKeypairUser       = 10 // 2.10: a keypair for another user (user_id)
	mvKeypairPaging     = 35 // 2.35: limit and marker on os-keypairs
	mvKeypairImportOnly = 92 // 2.92: public_key required; '@' and '.' in names
)
