module example.com/skillgate/wasm-slugify

go 1.24
