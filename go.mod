module github.com/linattn/linattn

go 1.26.8
