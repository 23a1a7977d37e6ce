/*
 * requests.c - a requests task: requests arrive, periodically or as a
 * Poisson process, and are served first come, first served, each for its
 * service time of CPU.
 *
 * The queue is not stored.  A task draws its arrivals and its service
 * times from two streams of its own, so that its k-th request arrives and
 * needs the same CPU whatever else the machine does; when it finishes a
 * request it draws the next.  If that one has arrived already it was
 * queued, and it is served at once; if not, the task sleeps until it
 * arrives, the one timer a requests task arms.  So a task its limit
 * starves, which queues thousands of requests (the bench case
 * ended with 1.3 M queued, 10 MB written once), costs neither memory nor a
 * timer per request, and a queue cannot overflow: the requests still
 * queued at the end are counted then, by drawing on to the end.  Every
 * arrival still counts as an event of the model, when it is reached.
 *
 * Streams of its own also make a sweep's runs compare like with like:
 * each runs the same arrivals and service times (common random numbers),
 * so that what differs between two values is the limit's doing, not the
 * luck of the draw.  The k-th request's arrival is the (k-1)-th gap's sum
 * from the first, and its service time the k-th draw of the other stream.
 */
#include "sim/sim_int.h"

static int64_t arrival_gap(struct cfsbw_sim *s, struct sim_task *t)
{
	return t->arrivals_periodic
		       ? t->gap_ns
		       : cfsbw_sim__rng_exp(&s->rng, &t->draw[0], t->gap_ns);
}

static int64_t service_time(struct cfsbw_sim *s, struct sim_task *t)
{
	return t->service_exp
		       ? cfsbw_sim__rng_exp(&s->rng, &t->draw[1], t->work_ns)
		       : t->work_ns;
}

/* Periodic arrivals: the first at the start; Poisson: a gap after it. */
void cfsbw_sim__req_start(struct cfsbw_sim *s, struct sim_task *t)
{
	t->next_arrival = s->now;
	if (!t->arrivals_periodic)
		t->next_arrival += arrival_gap(s, t);
	cfsbw_sim__timer_arm(&s->evq, &t->wake, t->next_arrival);
}

/* Request next_arrival becomes the one served; the following one is
 * drawn. */
static void take_next(struct cfsbw_sim *s, struct sim_task *t)
{
	t->req_arrival = t->next_arrival;
	t->burst_left = service_time(s, t);
	t->next_arrival += arrival_gap(s, t);
}

void cfsbw_sim__req_arrival(struct cfsbw_sim *s, struct sim_task *t)
{
	SIM_BUG_ON(t->runnable || t->next_arrival != s->now);
	take_next(s, t);
	cfsbw_sim__task_wake(s, t);
}

void cfsbw_sim__req_done(struct cfsbw_sim *s, struct sim_task *t)
{
	struct sim_line *l = t->line;
	l->completed++;
	cfsbw_sim__line_record(s, l, s->now - t->req_arrival);
	if (t->next_arrival <= s->now) {
		/* it arrived while this one ran or waited: it was queued,
		 * an event of the model without a timer */
		s->events++;
		take_next(s, t);
		cfsbw_sim__task_continue(s, t);
		return;
	}
	cfsbw_sim__task_sleep(s, t);
	cfsbw_sim__timer_arm(&s->evq, &t->wake, t->next_arrival);
}

uint64_t cfsbw_sim__req_pending(struct cfsbw_sim *s, struct sim_task *t)
{
	if (!t->runnable)
		return 0; /* idle: its next arrival is not before the end */
	uint64_t n = 1; /* the one in service or waiting */
	int64_t end = s->end_ns;
	if (t->next_arrival < end) {
		if (t->arrivals_periodic) {
			n += (uint64_t)((end - 1 - t->next_arrival) / t->gap_ns) +
			     1;
		} else {
			/* only the arrivals' stream: nothing is served any
			 * more, so no service time is drawn */
			for (int64_t a = t->next_arrival; a < end;
			     a += arrival_gap(s, t))
				n++;
		}
	}
	s->events += n - 1;
	return n;
}
