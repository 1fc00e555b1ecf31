module github.com/linattn/linattn/examples

go 1.24.0

require github.com/linattn/linattn v0.0.0

require (
	github.com/nlpodyssey/gopickle v0.3.0 // indirect
	github.com/sbinet/npyio v0.9.0 // indirect
	golang.org/x/sys v0.41.0 // indirect
	golang.org/x/text v0.28.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
)

replace github.com/linattn/linattn => ../
