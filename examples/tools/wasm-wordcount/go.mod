module example.com/skillgate/wasm-wordcount

go 1.24
