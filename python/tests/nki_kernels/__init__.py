"""NKI kernels in the style of AWS's NKI tutorials, written for birsim.nki's tests. They import
`nki` the ordinary way; the tests make that resolve to birsim.nki (birsim.nki.install())."""
