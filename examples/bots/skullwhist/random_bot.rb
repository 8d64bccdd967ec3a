#!/usr/bin/env ruby
# A SkullWhist bot that bids and plays at random, like the 2014 SkullSpace
# example bots, for Croupier's SkullWhist REST API.
#
# Usage:
#
#     random_bot.rb [URL [NAME [PASSWORD]]] [--games N]
#
#     URL       the server, default http://127.0.0.1:8080
#     NAME      the bot's name, default a random one (random-rb-xxxxxx)
#     PASSWORD  its password (required with NAME; random with a random name)
#     --games N play N games and stop (default: play forever)
#
# The algorithm is the one every example bot of the event follows:
#
#     - Attempt to register a new bot
#       - If the registration fails, don't worry about it
#     - Attempt to login with a bot's name and password
#       - If that doesn't work, exit
#     - In a never ending loop, do the following:
#       - Repeatedly try to join a new game
#       - Once a game is joined, notify the server of your bid
#       - For thirteen rounds:
#         - Wait for it to be our turn
#         - Pick a random card, as restricted by the game's rules
#       - Wait for the game to end on the server
#
# Ruby standard library only.

require 'json'
require 'net/http'
require 'securerandom'
require 'socket'
require 'uri'

# How long to wait between two status requests while waiting for our turn.
POLL_DELAY = 0.02

# new-game waits about 30 s for an opponent before it answers "retry", so a
# request may take that long; give up on a silent server after 90 s.
TIMEOUT = 90

# Posts JSON to /api/<method>/ over one keep-alive connection.
class Api
  def initialize(url)
    uri = URI.parse(url)
    abort 'the server URL must start with http:// or https://' unless uri.is_a?(URI::HTTP)
    @base = uri.path.chomp('/')
    @http = Net::HTTP.new(uri.host, uri.port)
    @http.use_ssl = (uri.scheme == 'https')
    @http.open_timeout = 10
    @http.read_timeout = TIMEOUT
    # Net::HTTP keeps the connection open between requests inside start.
    @http.start
    nodelay
  end

  # Small requests and replies: send each at once (no Nagle delay).
  def nodelay
    io = @http.instance_variable_get(:@socket)&.io
    io = io.to_io if io.respond_to?(:to_io) # an SSL socket wraps the TCP one
    io.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, 1) if io
  end

  # The reply to `method`, after waiting out any "retry" that is not
  # new-game's "no opponent yet".
  def call(method, fields)
    loop do
      request = Net::HTTP::Post.new("#{@base}/api/#{method}/", 'Content-Type' => 'application/json')
      request.body = JSON.generate(fields)
      # Net::HTTP reconnects by itself when the server closed the kept-alive
      # connection; set TCP_NODELAY again on the new socket.
      response = @http.request(request)
      nodelay
      wait = retry_after(response['Retry-After'])
      if %w[429 503].include?(response.code) && wait
        # The server is busy (too many connections): wait, ask again.
        sleep wait
        next
      end
      abort "#{method}: HTTP #{response.code} from the server" unless response.code == '200'
      reply = JSON.parse(response.body)
      # "retry" from new-game without Retry-After means "no opponent yet":
      # the caller asks again at once. Any other "retry" means the server
      # throttles us (too many requests or failed logins): wait the
      # Retry-After header's seconds and send the same request.
      if reply['result'] == 'retry' && (wait || method != 'new-game')
        sleep(wait || 1)
        next
      end
      return reply
    end
  end

  # A Retry-After header's seconds (at least 1), or nil without one.
  def retry_after(value)
    return nil if value.nil?
    [Integer(value.strip, exception: false) || 1, 1].max
  end
end

# One line about a finished game (an old-game reply) for bot `me`.
def describe(record, me)
  us, them = record['bot1'] == me ? %w[1 2] : %w[2 1]
  unless record['forfeited_by'].nil?
    who = record['forfeited_by'] == me ? 'we' : 'the opponent'
    return "#{who} forfeited in round #{record['round'] + 1}"
  end
  score = record["score#{us}"]
  other = record["score#{them}"]
  verdict = if score > other then 'won' elsif score < other then 'lost' else 'tie' end
  "we bid #{record["bid#{us}"]} and took #{record["tricks#{us}"]} tricks: #{score} to #{other}, #{verdict}"
end

def main
  args = ARGV.dup
  games = nil
  if (i = args.index('--games'))
    abort '--games takes a number' unless args[i + 1] =~ /\A\d+\z/
    games = args[i + 1].to_i
    args.slice!(i, 2)
  end
  abort File.read(__FILE__).lines[1..12].map { |l| l.sub(/^# ?/, '') }.join if args.length > 3 || args.any? { |a| a.start_with?('-') }
  url = args[0] || 'http://127.0.0.1:8080'
  if args.length > 1
    abort 'give a password after the name' if args.length < 3
    name = args[1]
    password = args[2]
  else
    name = "random-rb-#{SecureRandom.hex(3)}"
    password = SecureRandom.hex(16)
  end

  api = Api.new(url)

  # Attempt to register a new bot.
  reply = api.call('register', 'name' => name, 'password' => password)
  if reply['result'] != 'success'
    # If the registration fails, don't worry about it (the name may be ours
    # from an earlier run).
    puts "register: #{reply['reason']}"
  end

  # Attempt to login with the bot's name and password.
  reply = api.call('login', 'name' => name, 'password' => password)
  # If that doesn't work, exit.
  abort "login failed: #{reply['reason']}" if reply['result'] != 'success'
  session = reply['session']
  me = reply['id']
  puts "logged in as #{name} (bot #{me})"
  $stdout.flush

  played = 0
  # In a never ending loop (or until we have played --games games):
  while games.nil? || played < games
    # Repeatedly try to join a new game.
    loop do
      reply = api.call('new-game', 'session' => session)
      break if reply['result'] == 'success'
      abort "new-game failed: #{reply['reason']}" if reply['result'] != 'retry'
      # "retry": nobody to play with yet; ask again.
    end
    game = reply['game']
    cards = reply['cards']
    puts "game #{game} against bot #{reply['opponent']}: #{cards.join(' ')}"

    # Once a game is joined, notify the server of our bid.
    bid = rand(1..13)
    reply = api.call('bid', 'session' => session, 'bid' => bid)
    abort "bid failed: #{reply['reason']}" if reply['result'] != 'success'

    # For thirteen rounds:
    (1..13).each do |round|
      # Wait for it to be our turn.
      status = nil
      loop do
        status = api.call('status', 'session' => session)
        abort "status failed: #{status['reason']}" if status['result'] != 'success'
        break if status['game'] != game || status['your-turn']

        sleep POLL_DELAY
      end
      if status['game'] != game
        # The game ended early: a forfeit (a bot was too slow).
        puts "game #{game} ended in round #{round}"
        break
      end

      # Pick a random card, as restricted by the game's rules: when the
      # opponent led this round, follow its suit if we can.
      choices = cards
      led = status['opponent-current-card']
      unless led.nil?
        same_suit = cards.select { |c| c[0] == led[0] }
        choices = same_suit unless same_suit.empty?
      end
      card = choices.sample
      reply = api.call('play', 'session' => session, 'card' => card)
      abort "play #{card} failed: #{reply['reason']}" if reply['result'] != 'success'
      cards.delete(card)
    end

    # Wait for the game to end on the server (status shows no game).
    loop do
      status = api.call('status', 'session' => session)
      abort "status failed: #{status['reason']}" if status['result'] != 'success'
      break if status['game'] != game

      sleep POLL_DELAY
    end
    played += 1

    # Not part of the 2014 algorithm: look the result up.
    reply = api.call('old-game', 'session' => session, 'game' => game)
    if reply['result'] == 'success'
      puts "game #{game} over: #{describe(reply, me)}"
    else
      puts "game #{game}: #{reply['reason']}"
    end
    $stdout.flush
  end
end

main
