/*
 * A scripted stand-in for a model (tests/test_llm.c), in two modes:
 *
 *   llm_stub lines SCRIPT LOG
 *       the JSON-lines command protocol: for each request line read from
 *       stdin, appends the line to LOG and writes the next line of SCRIPT;
 *   llm_stub http SCRIPT LOG PORTFILE
 *       a one-connection-at-a-time HTTP server on 127.0.0.1 (an ephemeral
 *       port, written to PORTFILE): for each POST appends the body to LOG and
 *       answers 200 with the next line of SCRIPT as the body.
 *
 * Script lines starting with '@' misbehave instead: @SLEEP (never answer),
 * @HUGE (bytes without end, no newline), @BINARY (bytes 0-255 and a
 * newline), @HALF (half of a JSON line, then the connection closes / the
 * command exits), @EXIT (exit at once), @STATUS500 (http: an error status).
 * After the script's last line the stub exits.
 */
#define _GNU_SOURCE 1
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static char **lines;
static size_t nlines, next_line;

static void load(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) exit(3);
  size_t cap = 0;
  char *l = NULL;
  size_t lcap = 0;
  ssize_t n;
  while ((n = getline(&l, &lcap, f)) >= 0) {
    if (n && l[n - 1] == '\n') l[--n] = '\0';
    if (nlines == cap) {
      cap = cap ? cap * 2 : 16;
      lines = realloc(lines, cap * sizeof *lines);
    }
    lines[nlines++] = strdup(l);
  }
  free(l);
  fclose(f);
}

static void log_append(const char *path, const char *s, size_t n) {
  FILE *f = fopen(path, "a");
  if (!f) return;
  fwrite(s, 1, n, f);
  fputc('\n', f);
  fclose(f);
}

/* False when the reader went away. */
static int write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n) {
    ssize_t w = write(fd, c, n);
    if (w <= 0) return 0;
    c += w;
    n -= (size_t)w;
  }
  return 1;
}

/* Bytes until the reader goes away. */
static void huge(int fd) {
  char buf[65536];
  memset(buf, 'x', sizeof buf);
  while (write_all(fd, buf, sizeof buf)) {
  }
}

static void binary(int fd) {
  unsigned char b[257];
  for (int i = 0; i < 256; i++) b[i] = (unsigned char)(i == '\n' ? 0 : i);
  b[256] = '\n';
  write_all(fd, b, sizeof b);
}

static int lines_mode(const char *logp) {
  char *req = NULL;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline(&req, &cap, stdin)) > 0) {
    log_append(logp, req, (size_t)(req[n - 1] == '\n' ? n - 1 : n));
    if (next_line >= nlines) return 0;
    const char *l = lines[next_line++];
    if (!strcmp(l, "@SLEEP")) pause();
    else if (!strcmp(l, "@HUGE")) huge(1);
    else if (!strcmp(l, "@BINARY")) binary(1);
    else if (!strcmp(l, "@EXIT")) return 0;
    else if (!strcmp(l, "@HALF")) {
      write_all(1, "{\"content\":\"<think>", 19);
      return 0;
    } else {
      write_all(1, l, strlen(l));
      write_all(1, "\n", 1);
    }
  }
  return 0;
}

static void respond(int c, const char *status, const char *body, size_t n) {
  char head[256];
  int h = snprintf(head, sizeof head,
                   "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                   "Connection: close\r\n\r\n",
                   status, n);
  write_all(c, head, (size_t)h);
  write_all(c, body, n);
}

static int http_mode(const char *logp, const char *portfile) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 8) != 0) return 3;
  socklen_t al = sizeof a;
  getsockname(s, (struct sockaddr *)&a, &al);
  char tmp[512];
  snprintf(tmp, sizeof tmp, "%s.tmp", portfile);
  FILE *f = fopen(tmp, "w");
  if (!f) return 3;
  fprintf(f, "%d\n", ntohs(a.sin_port));
  fclose(f);
  rename(tmp, portfile);
  while (next_line < nlines) {
    int c = accept(s, NULL, NULL);
    if (c < 0) continue;
    /* headers, then Content-Length bytes of body */
    static char buf[1 << 22];
    size_t len = 0;
    char *end = NULL;
    while (!end && len < sizeof buf - 1) {
      ssize_t r = read(c, buf + len, sizeof buf - 1 - len);
      if (r <= 0) break;
      len += (size_t)r;
      buf[len] = '\0';
      end = strstr(buf, "\r\n\r\n");
    }
    if (!end) {
      close(c);
      continue;
    }
    size_t body_at = (size_t)(end + 4 - buf), want = 0;
    char *cl = strcasestr(buf, "Content-Length:");
    if (cl && cl < end) want = strtoul(cl + 15, NULL, 10);
    while (len - body_at < want && len < sizeof buf - 1) {
      ssize_t r = read(c, buf + len, sizeof buf - 1 - len);
      if (r <= 0) break;
      len += (size_t)r;
    }
    log_append(logp, buf + body_at, len - body_at);
    const char *l = lines[next_line++];
    if (!strcmp(l, "@SLEEP")) pause();
    else if (!strcmp(l, "@EXIT")) return 0;
    else if (!strcmp(l, "@HUGE")) {
      const char *h = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n";
      write_all(c, h, strlen(h));
      huge(c);
    } else if (!strcmp(l, "@BINARY")) {
      unsigned char b[256];
      for (int i = 0; i < 256; i++) b[i] = (unsigned char)i;
      respond(c, "200 OK", (const char *)b, sizeof b);
    } else if (!strcmp(l, "@HALF")) {
      const char *h = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n{\"choices\":";
      write_all(c, h, strlen(h));
    } else if (!strcmp(l, "@STATUS500")) {
      respond(c, "500 Internal Server Error", "{\"error\":\"overloaded\"}", 22);
    } else {
      respond(c, "200 OK", l, strlen(l));
    }
    close(c);
  }
  return 0;
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  if (argc >= 4 && !strcmp(argv[1], "lines")) {
    load(argv[2]);
    return lines_mode(argv[3]);
  }
  if (argc >= 5 && !strcmp(argv[1], "http")) {
    load(argv[2]);
    return http_mode(argv[3], argv[4]);
  }
  fprintf(stderr, "usage: llm_stub lines SCRIPT LOG | http SCRIPT LOG PORTFILE\n");
  return 2;
}
