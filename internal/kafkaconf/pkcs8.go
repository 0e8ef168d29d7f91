package kafkaconf

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/asn1"
	"errors"
	"fmt"
)

// PKCS#8 EncryptedPrivateKeyInfo with PBES2 (PBKDF2 + AES-CBC), which is what
// `openssl genpkey -aes256` and `openssl pkcs8 -topk8 -v2 aes256` write. The standard
// library does not decrypt it; librdkafka (OpenSSL) does, so users have such keys.

var (
	oidPBES2      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACSHA512 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}
	oidAES128CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
)

type encryptedPrivateKeyInfo struct {
	Algo          algorithmIdentifier
	EncryptedData []byte
}

type algorithmIdentifier struct {
	Algorithm  asn1.ObjectIdentifier
	Parameters asn1.RawValue `asn1:"optional"`
}

type pbes2Params struct {
	KeyDerivationFunc algorithmIdentifier
	EncryptionScheme  algorithmIdentifier
}

type pbkdf2Params struct {
	Salt           []byte
	IterationCount int
	KeyLength      int                 `asn1:"optional"`
	PRF            algorithmIdentifier `asn1:"optional"`
}

func decryptPKCS8(der, password []byte) ([]byte, error) {
	var info encryptedPrivateKeyInfo
	if _, err := asn1.Unmarshal(der, &info); err != nil {
		return nil, fmt.Errorf("encrypted key: %w", err)
	}
	if !info.Algo.Algorithm.Equal(oidPBES2) {
		return nil, fmt.Errorf("encrypted key: algorithm %v not supported (want PBES2)", info.Algo.Algorithm)
	}
	var p pbes2Params
	if _, err := asn1.Unmarshal(info.Algo.Parameters.FullBytes, &p); err != nil {
		return nil, fmt.Errorf("encrypted key: %w", err)
	}
	if !p.KeyDerivationFunc.Algorithm.Equal(oidPBKDF2) {
		return nil, errors.New("encrypted key: only PBKDF2 is supported")
	}
	var kdf pbkdf2Params
	if _, err := asn1.Unmarshal(p.KeyDerivationFunc.Parameters.FullBytes, &kdf); err != nil {
		return nil, fmt.Errorf("encrypted key: %w", err)
	}
	prf := sha1.New
	switch {
	case kdf.PRF.Algorithm == nil, kdf.PRF.Algorithm.Equal(oidHMACSHA1):
	case kdf.PRF.Algorithm.Equal(oidHMACSHA256):
		prf = sha256.New
	case kdf.PRF.Algorithm.Equal(oidHMACSHA512):
		prf = sha512.New
	default:
		return nil, fmt.Errorf("encrypted key: PRF %v not supported", kdf.PRF.Algorithm)
	}
	var keyLen int
	switch {
	case p.EncryptionScheme.Algorithm.Equal(oidAES128CBC):
		keyLen = 16
	case p.EncryptionScheme.Algorithm.Equal(oidAES192CBC):
		keyLen = 24
	case p.EncryptionScheme.Algorithm.Equal(oidAES256CBC):
		keyLen = 32
	default:
		return nil, fmt.Errorf("encrypted key: cipher %v not supported", p.EncryptionScheme.Algorithm)
	}
	var iv []byte
	if _, err := asn1.Unmarshal(p.EncryptionScheme.Parameters.FullBytes, &iv); err != nil {
		return nil, fmt.Errorf("encrypted key: %w", err)
	}
	key, err := pbkdf2.Key(prf, string(password), kdf.Salt, kdf.IterationCount, keyLen)
	if err != nil {
		return nil, fmt.Errorf("encrypted key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	if len(info.EncryptedData)%block.BlockSize() != 0 || len(iv) != block.BlockSize() {
		return nil, errors.New("encrypted key: malformed ciphertext")
	}
	out := make([]byte, len(info.EncryptedData))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(out, info.EncryptedData)
	n := int(out[len(out)-1])
	if n == 0 || n > block.BlockSize() || n > len(out) {
		return nil, errKeyPassword
	}
	for _, b := range out[len(out)-n:] {
		if int(b) != n {
			return nil, errKeyPassword
		}
	}
	return out[:len(out)-n], nil
}
