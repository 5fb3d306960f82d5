# greet: the simple protocol in Ruby. Arguments on stdin, result on stdout.
require "json"

args = JSON.parse($stdin.read)
greetings = { "en" => "Hello", "fr" => "Bonjour", "de" => "Hallo", "es" => "Hola" }
word = greetings.fetch(args.fetch("language", "en")) { abort "unknown language #{args['language']}" }
warn "greeting #{args['name']}"
puts JSON.generate({ greeting: "#{word}, #{args['name']}!" })
